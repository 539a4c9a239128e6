-- The chat: a scratch buffer (tinycoder://chat) in a split, where replies of
-- `tinycoder/chat`, `tinycoder.explain` and `tinycoder.ask` stream in as the
-- server sends `tinycoder/chatDelta` notifications.
local M = {}

M.session_id = nil
-- Everything streamed per request id (tests and scripts read it).
M.replies = {}
local bufnr = nil

local function chat_buffer()
  if bufnr and vim.api.nvim_buf_is_valid(bufnr) then return bufnr end
  bufnr = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, bufnr, 'tinycoder://chat')
  vim.bo[bufnr].syntax = 'markdown'
  vim.bo[bufnr].bufhidden = 'hide'
  return bufnr
end

--- Shows the chat buffer in a split (once).
function M.open()
  local b = chat_buffer()
  if #vim.fn.win_findbuf(b) == 0 then
    local from = vim.api.nvim_get_current_win()
    vim.cmd('botright 12split')
    vim.api.nvim_win_set_buf(0, b)
    vim.api.nvim_set_current_win(from)
  end
  return b
end

--- Appends `text` to the chat buffer, continuing its last line.
function M.append(text)
  local b = chat_buffer()
  local last = vim.api.nvim_buf_line_count(b)
  local tail = vim.api.nvim_buf_get_lines(b, last - 1, last, false)[1] or ''
  local lines = vim.split(tail .. text, '\n', { plain = true })
  vim.api.nvim_buf_set_lines(b, last - 1, last, false, lines)
  for _, w in ipairs(vim.fn.win_findbuf(b)) do
    vim.api.nvim_win_set_cursor(w, { vim.api.nvim_buf_line_count(b), 0 })
  end
end

--- The `tinycoder/chatDelta` handler.
function M.delta_handler(_, params)
  if not params or not params.delta then return end
  local id = params.requestId or ''
  M.replies[id] = (M.replies[id] or '') .. params.delta
  M.append(params.delta)
end

--- Sends `message` about the current buffer (selection or cursor) and streams the reply.
function M.send(client, message, range)
  local b = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)
  local request_id = 'chat-' .. tostring((vim.uv or vim.loop).hrtime())
  local params = {
    sessionId = M.session_id,
    requestId = request_id,
    message = message,
    textDocument = { uri = vim.uri_from_bufnr(b) },
    position = { line = cursor[1] - 1, character = 0 },
    range = range,
  }
  M.open()
  M.append('\n\n> ' .. message .. '\n\n')
  M.replies[request_id] = ''
  require('tinycoder').request(client, 'tinycoder/chat', params, function(err, result)
    if err then
      M.append('\n[error: ' .. tostring(err.message or err) .. ']')
      return
    end
    M.session_id = result.sessionId
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'TinycoderChatDone' })
  end, b)
  return request_id
end

return M
