-- Run by server/tests/nvim_codeaction.rs:
--   nvim --headless -u NONE -c "luafile server/tests/nvim/codeaction.lua"
-- Env: TINYCODER_NVIM_LIB (lib.lua), TINYCODER_BIN, TINYCODER_FILE (a .py file), TINYCODER_PLUGIN (editors/nvim), TINYCODER_OUT.
local lib = dofile(os.getenv('TINYCODER_NVIM_LIB'))
local function say(line) lib.say(line) end
local ok, err = pcall(function()
  lib.start()
  vim.opt.runtimepath:prepend(os.getenv('TINYCODER_PLUGIN'))
  vim.cmd('filetype on')
  require('tinycoder').setup({ cmd = { os.getenv('TINYCODER_BIN'), 'lsp' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TINYCODER_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  say('FILETYPE\t' .. vim.bo[buf].filetype)
  local ready = vim.wait(20000, function()
    for _, c in pairs(lib.clients(buf)) do
      if c.name == 'tinycoder' and c.server_capabilities ~= nil and c.initialized ~= false then return true end
    end
    return false
  end, 50)
  say('ATTACHED\t' .. tostring(ready))
  local diag = {
    range = { start = { line = 1, character = 15 }, ['end'] = { line = 1, character = 16 } },
    severity = 1, source = 'pyright', message = '"b" is not defined',
  }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = diag.range,
    context = { diagnostics = { diag } },
  }
  local results, req_err = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 20000)
  if req_err then say('ERROR\t' .. tostring(req_err)) end
  for _, res in pairs(results or {}) do
    if res.err then say('ERROR\t' .. vim.inspect(res.err)) end
    for _, a in ipairs(res.result or {}) do
      say(string.format('ACTION\t%s\t%s\t%s\t%s', a.title, a.kind or '', tostring(a.isPreferred), a.command and a.command.command or ''))
    end
  end
  lib.stop_all(3000)
end)
lib.finish(ok, err)
