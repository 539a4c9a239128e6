-- Headless check of the diff preview's Accept (no server, no model): a buffer
-- edited while the preview is open makes the patch stale, and Accept refuses it
-- and keeps the user's text; an unchanged buffer gets the patch.
local lib = dofile(os.getenv('TINYCODER_NVIM_LIB'))
local say = lib.say

vim.opt.runtimepath:append(os.getenv('TINYCODER_PLUGIN'))
local ok, err = pcall(function()
  lib.start()
  local preview = require('tinycoder.preview')
  local messages = {}
  vim.notify = function(msg) table.insert(messages, msg) end
  local file = os.getenv('TINYCODER_FILE')
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local text = function() return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\\n') end
  -- `a - b` becomes `a + b` (line 2, UTF-16 columns 13 to 14).
  local edit = { documentChanges = { { textDocument = { uri = vim.uri_from_fname(file) }, edits = {
    { range = { start = { line = 1, character = 13 }, ['end'] = { line = 1, character = 14 } }, newText = '+' },
  } } } }

  preview.show(edit, nil, 'tests pass')
  say('PREVIEW_OPEN', tostring(preview.pending ~= nil))
  -- The user types in the buffer while the preview is open.
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, { 'def add(a, b):  # typed' })
  preview.accept()
  say('STALE_TEXT', text())
  say('STALE_MSG', messages[#messages])
  say('STALE_PENDING', tostring(preview.pending ~= nil))
  say('STALE_UNDO', tostring(preview.last_applied ~= nil))

  preview.show(edit, nil, 'tests pass')
  preview.accept()
  say('FRESH_TEXT', text())
  say('FRESH_MSG', messages[#messages])
end)
lib.finish(ok, err)
