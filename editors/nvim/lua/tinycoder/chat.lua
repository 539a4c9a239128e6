-- The chat: a scratch buffer (tinycoder://chat) in a split, where replies of
-- `tinycoder/chat`, `tinycoder.explain` and `tinycoder.ask` stream in as the
-- server sends `tinycoder/chatDelta` notifications.
local M = {}

M.session_id = nil
-- Everything streamed per request id (tests and scripts read it).
M.replies = {}
-- Request ids whose whole reply arrived. The server's notifications and its response
-- travel on separate queues, so a last delta can come after the response: it is
-- already in the reply then, and is dropped.
local finished = {}
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
  if finished[id] then return end
  M.replies[id] = (M.replies[id] or '') .. params.delta
  M.append(params.delta)
end

--- Completes a streamed reply with the whole one from the response: what the deltas
--- have not shown yet is appended (a reply that went another way is shown whole).
function M.complete(id, reply)
  if finished[id] then return end
  finished[id] = true
  if type(reply) ~= 'string' then return end
  local streamed = M.replies[id] or ''
  if reply:sub(1, #streamed) == streamed then
    if #reply > #streamed then M.append(reply:sub(#streamed + 1)) end
  else
    M.append('\n\n' .. reply)
  end
  M.replies[id] = reply
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
      finished[request_id] = true
      M.append('\n[error: ' .. tostring(err.message or err) .. ']')
      return
    end
    M.session_id = result.sessionId
    M.complete(request_id, result.reply)
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'TinycoderChatDone' })
  end, b)
  return request_id
end

return M
