-- Run by server/tests/nvim_ghost.rs: ghost text from the real server and a real model.
--   nvim --headless -u NONE -i NONE -c "luafile server/tests/nvim/ghost.lua"
-- Env: TINYCODER_BIN, TINYCODER_PLUGIN (editors/nvim), TINYCODER_FILE (a .py file whose
-- third line is a half-typed `return `), TINYCODER_URL, TINYCODER_MODEL, TINYCODER_OUT,
-- TINYCODER_NVIM_LIB (lib.lua).
local lib = dofile(os.getenv('TINYCODER_NVIM_LIB'))
local say = lib.say
local LONG = 240 * 1000

local ok, err = pcall(function()
  lib.start()
  vim.opt.runtimepath:prepend(os.getenv('TINYCODER_PLUGIN'))
  vim.cmd('filetype on')
  local tc = require('tinycoder')
  local role = { name = os.getenv('TINYCODER_MODEL') }
  tc.setup({
    cmd = { os.getenv('TINYCODER_BIN'), 'lsp' },
    init_options = {
      backend = { kind = 'openai', url = os.getenv('TINYCODER_URL') },
      models = { planner = role, coder = role, critic = role, summarizer = role },
      -- A hang guard on a busy 2-core machine, not a latency target.
      completion = { timeout_ms = LONG },
    },
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TINYCODER_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  local attached = vim.wait(30000, function()
    local c = tc.client(buf, true)
    return c ~= nil and c.initialized ~= false and c.server_capabilities ~= nil
  end, 100)
  say('ATTACHED', tostring(attached))
  local c = tc.client(buf, true)
  say('PROVIDER', tostring(c and c.server_capabilities.inlineCompletionProvider ~= nil))

  -- Line 3 is `    return `: ask at its end, as typing there would.
  local row = 2
  local col = #vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  say('ASKED', tostring(tc.ghost.request(buf, row, col)))
  local shown = vim.wait(LONG, function() return tc.ghost.visible() end, 100)
  say('SHOWN', tostring(shown))
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, tc.ghost.namespace, 0, -1, { details = true })) do
    local chunks = {}
    for _, chunk in ipairs(m[4].virt_text or {}) do chunks[#chunks + 1] = chunk[1] end
    say('GHOST', tostring(m[2]), tostring(m[3]), m[4].virt_text_pos or '', table.concat(chunks))
  end
  say('SUGGESTION', tc.ghost.text() or '')
  say('ACCEPTED', tostring(tc.ghost.accept('all')))
  say('LINE', vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1])
  say('MARKS_AFTER', tostring(#vim.api.nvim_buf_get_extmarks(buf, tc.ghost.namespace, 0, -1, {})))
  vim.cmd('write')

  -- Switched off for Python: nothing is asked; on again: asked.
  vim.cmd('TinycoderCompletion off python')
  say('OFF_ASKED', tostring(tc.ghost.request(buf, row, 0)))
  vim.cmd('TinycoderCompletion on python')
  say('ON_ASKED', tostring(tc.ghost.request(buf, row, 0)))
  tc.ghost.clear()
  lib.stop_all(3000)
end)
lib.finish(ok, err)
