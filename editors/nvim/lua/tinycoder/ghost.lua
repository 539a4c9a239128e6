-- Ghost text: the server's inline completion (`textDocument/inlineCompletion`)
-- shown after the cursor while you type in Insert mode, accepted with a key
-- (<Tab> all, <S-Tab> its first line, <C-B> its first word, as llama.vim).
-- Neovim 0.10+ shows it inside the line; 0.7 to 0.9 lay it over the end of the
-- line (or after it, when text follows the cursor). The server debounces and
-- cancels superseded requests; this side only drops answers that came too late.
local M = {}

M.namespace = vim.api.nvim_create_namespace('tinycoder_ghost')

M.options = {
  enabled = true,
  -- Milliseconds of no typing before asking (the server also waits completion.debounce_ms).
  debounce_ms = 50,
  -- Keys in Insert mode; false leaves a key unmapped. Without a suggestion each key does what it did.
  accept = '<Tab>',
  accept_line = '<S-Tab>',
  accept_word = '<C-B>',
  -- filetype -> false: no suggestions in buffers of that filetype.
  filetypes = {},
  hl_group = 'Comment',
}

-- What is shown: where, for which change of the buffer, and the request in flight.
local state = { buf = nil, row = nil, col = nil, text = nil, tick = nil, seq = 0, timer = nil, client = nil, request_id = nil }

--- Whether suggestions are on for `buf` (globally and for its filetype).
function M.enabled_for(buf)
  return M.options.enabled and M.options.filetypes[vim.bo[buf].filetype] ~= false
end

--- Hides the suggestion and forgets any answer still on its way.
function M.clear()
  state.seq = state.seq + 1
  if state.client and state.request_id then
    local c = state.client
    pcall(function()
      if vim.fn.has('nvim-0.11') == 1 then c:cancel_request(state.request_id) else c.cancel_request(state.request_id) end
    end)
  end
  state.request_id = nil
  if state.buf and vim.api.nvim_buf_is_valid(state.buf) then
    vim.api.nvim_buf_clear_namespace(state.buf, M.namespace, 0, -1)
  end
  state.text = nil
end

--- Whether a suggestion is shown for the buffer as it is now.
function M.visible()
  return state.text ~= nil and state.buf == vim.api.nvim_get_current_buf()
    and vim.api.nvim_buf_is_valid(state.buf) and vim.api.nvim_buf_get_changedtick(state.buf) == state.tick
end

--- The suggestion shown, or nil.
function M.text()
  return M.visible() and state.text or nil
end

local function show(buf, row, col, text)
  vim.api.nvim_buf_clear_namespace(buf, M.namespace, 0, -1)
  local lines = vim.split(text, '\n', { plain = true })
  local hl = M.options.hl_group
  local opts = { virt_text = { { lines[1], hl } }, hl_mode = 'combine' }
  if vim.fn.has('nvim-0.10') == 1 then
    opts.virt_text_pos = 'inline'
  else
    local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
    opts.virt_text_pos = col >= #line and 'overlay' or 'eol'
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do opts.virt_lines[#opts.virt_lines + 1] = { { lines[i], hl } } end
  end
  vim.api.nvim_buf_set_extmark(buf, M.namespace, row, col, opts)
  state.buf, state.row, state.col, state.text = buf, row, col, text
  state.tick = vim.api.nvim_buf_get_changedtick(buf)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'TinycoderGhost' })
end

--- Asks the server for a suggestion at (row, col) of `buf` (0-based row, byte column;
--- default: the cursor) and shows it if the buffer has not changed meanwhile.
--- Returns false when nothing was asked (suggestions off, no server).
function M.request(buf, row, col)
  buf = buf or vim.api.nvim_get_current_buf()
  M.clear()
  if not M.enabled_for(buf) then return false end
  local tc = require('tinycoder')
  local client = tc.client(buf, true)
  if not client then return false end
  if row == nil then
    local cursor = vim.api.nvim_win_get_cursor(0)
    row, col = cursor[1] - 1, cursor[2]
  end
  local seq, tick = state.seq, vim.api.nvim_buf_get_changedtick(buf)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = row, character = vim.lsp.util.character_offset(buf, row, col, client.offset_encoding) },
    context = { triggerKind = 2 },
  }
  local ok, id = tc.request(client, 'textDocument/inlineCompletion', params, vim.schedule_wrap(function(err, result)
    if seq ~= state.seq or err or type(result) ~= 'table' then return end
    state.request_id = nil
    if not vim.api.nvim_buf_is_valid(buf) or vim.api.nvim_buf_get_changedtick(buf) ~= tick then return end
    local item = (result.items or result)[1]
    local text = item and item.insertText
    if type(text) == 'table' then text = text.value end
    if type(text) == 'string' and text ~= '' then show(buf, row, col, text) end
  end), buf)
  if ok then state.client, state.request_id = client, id end
  return ok and true or false
end

--- Inserts the suggestion ('all', 'line' or 'word' of it) at its place and moves the
--- cursor after it; the rest, if any, comes back from the server's cache as you go on.
--- Returns false when no suggestion is shown.
function M.accept(what)
  local text = M.text()
  if not text then return false end
  if what == 'line' then
    text = text:match('^[^\n]*')
  elseif what == 'word' then
    text = text:match('^%s*[%w_]+') or text:match('^%s*[^%s%w_]+') or text
  end
  local buf, row, col = state.buf, state.row, state.col
  M.clear()
  local lines = vim.split(text, '\n', { plain = true })
  vim.api.nvim_buf_set_text(buf, row, col, row, col, lines)
  local end_row = row + #lines - 1
  local end_col = #lines == 1 and col + #lines[1] or #lines[#lines]
  pcall(vim.api.nvim_win_set_cursor, 0, { end_row + 1, end_col })
  return true
end

--- Switches suggestions on, off or over ('toggle'), everywhere or for one filetype.
function M.set(how, filetype)
  local function flip(current)
    if how == 'on' then return true elseif how == 'off' then return false end
    return not current
  end
  if filetype and filetype ~= '' then
    M.options.filetypes[filetype] = flip(M.options.filetypes[filetype] ~= false)
  else
    M.options.enabled = flip(M.options.enabled)
  end
  if not M.enabled_for(vim.api.nvim_get_current_buf()) then M.clear() end
  return M.options.enabled
end

local function map(key, what, desc)
  if not key then return end
  vim.keymap.set('i', key, function()
    if not M.visible() then return key end
    vim.schedule(function() M.accept(what) end)
    return ''
  end, { expr = true, silent = true, desc = desc })
end

local function schedule_request(buf)
  M.clear()
  if not M.enabled_for(buf) then return end
  if state.timer then state.timer:stop() else state.timer = (vim.uv or vim.loop).new_timer() end
  local seq = state.seq
  state.timer:start(M.options.debounce_ms, 0, vim.schedule_wrap(function()
    if seq == state.seq and vim.api.nvim_get_mode().mode:sub(1, 1) == 'i'
      and vim.api.nvim_get_current_buf() == buf then
      M.request(buf)
    end
  end))
end

--- Sets ghost text up for the buffers tinycoder attaches to: `opts` overrides `M.options`.
function M.setup(opts, group, filetypes)
  M.options = vim.tbl_deep_extend('force', M.options, opts or {})
  map(M.options.accept, 'all', 'tinycoder: accept the suggestion')
  map(M.options.accept_line, 'line', 'tinycoder: accept the first line of the suggestion')
  map(M.options.accept_word, 'word', 'tinycoder: accept the first word of the suggestion')
  vim.api.nvim_create_autocmd('TextChangedI', {
    group = group,
    callback = function(args)
      if vim.tbl_contains(filetypes, vim.bo[args.buf].filetype) then schedule_request(args.buf) end
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, { group = group, callback = function() M.clear() end })
  vim.api.nvim_create_autocmd('CursorMovedI', {
    group = group,
    callback = function()
      -- Moving away (not typing) hides the suggestion; typing moves the cursor too, after TextChangedI.
      if state.text and state.buf == vim.api.nvim_get_current_buf() then
        local c = vim.api.nvim_win_get_cursor(0)
        if c[1] - 1 ~= state.row or c[2] ~= state.col then M.clear() end
      end
    end,
  })
end

return M
