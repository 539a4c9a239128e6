-- Run by server/tests/nvim_e2e.rs: the plugin, the real server and a real model, end to end.
--   nvim --headless -u NONE -i NONE -c "luafile server/tests/nvim/e2e.lua"
-- Env: TINYCODER_BIN, TINYCODER_PLUGIN (editors/nvim), TINYCODER_ROOT (a copy of the
-- example project), TINYCODER_TEST_FILE (its failing test file, relative),
-- TINYCODER_URL, TINYCODER_MODEL, TINYCODER_OUT, TINYCODER_NVIM_LIB (lib.lua).
local lib = dofile(os.getenv('TINYCODER_NVIM_LIB'))
local say = lib.say
local LONG = 1800 * 1000

local ok, err = pcall(function()
  lib.start()
  vim.opt.runtimepath:prepend(os.getenv('TINYCODER_PLUGIN'))
  vim.cmd('filetype on')
  local notify = vim.notify
  vim.notify = function(msg, level, o)
    say('NOTIFY', tostring(level), tostring(msg))
    return notify(msg, level, o)
  end
  local tc = require('tinycoder')
  local role = { name = os.getenv('TINYCODER_MODEL') }
  tc.setup({
    cmd = { os.getenv('TINYCODER_BIN'), 'lsp' },
    init_options = {
      backend = { kind = 'openai', url = os.getenv('TINYCODER_URL') },
      models = { planner = role, coder = role, critic = role, summarizer = role },
      -- A headless Neovim cannot answer the strategy question (lsp_strategy.rs covers it):
      -- a failed fix ends with its warning, which this test reports.
      runtime = { strategy_rounds = 0 },
    },
  })
  local root = os.getenv('TINYCODER_ROOT')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. os.getenv('TINYCODER_TEST_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  local attached = vim.wait(30000, function()
    local c = tc.client(buf)
    return c ~= nil and c.initialized ~= false and c.server_capabilities ~= nil
  end, 100)
  say('ATTACHED', tostring(attached))

  -- Run the tests: the failing one becomes a tinycoder diagnostic.
  vim.cmd('TinycoderRunTests')
  local function test_diags()
    local found = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == 'tinycoder' then table.insert(found, d) end
    end
    return found
  end
  vim.wait(300000, function() return #test_diags() > 0 end, 200)
  local diags = test_diags()
  say('DIAGNOSTICS', tostring(#diags), diags[1] and diags[1].message or '')
  if #diags == 0 then error('no test diagnostic') end

  -- The quick-fix on it, then the diff preview.
  vim.api.nvim_win_set_cursor(0, { diags[1].lnum + 1, 0 })
  -- A failed task ends the wait at once (its warning comes as window/showMessage).
  local failed = nil
  local show = vim.lsp.handlers['window/showMessage']
  vim.lsp.handlers['window/showMessage'] = function(e, result, ctx, cfg)
    if result and result.message and result.message:find('could not do it', 1, true) then failed = result.message end
    return show(e, result, ctx, cfg)
  end
  vim.cmd('TinycoderFix')
  vim.wait(LONG, function() return tc.preview.pending ~= nil or failed ~= nil end, 500)
  if failed then error('the fix failed: ' .. failed) end
  local p = tc.preview.pending
  say('PREVIEW', tostring(p ~= nil), p and tostring(#p.tabs) or '0', p and tostring(vim.wo.diff) or '')
  if not p then error('no preview') end
  local src = p.source_buffers[1]
  say('PREVIEW_FILE', vim.fn.fnamemodify(vim.api.nvim_buf_get_name(src), ':.'))
  vim.cmd('TinycoderAccept')
  say('PATCHED', table.concat(vim.api.nvim_buf_get_lines(src, 0, -1, false), '\n'))
  -- Accepting runs the tests again: the diagnostic clears.
  local cleared = vim.wait(600000, function() return #test_diags() == 0 end, 500)
  say('CLEARED', tostring(cleared))
  vim.cmd('silent! wall')

  -- A chat question that needs a file that is not open.
  vim.api.nvim_set_current_buf(buf)
  local client = tc.client(buf)
  local done = false
  vim.api.nvim_create_autocmd('User', { pattern = 'TinycoderChatDone', callback = function() done = true end })
  local id = tc.chat.send(client, 'How is the shipping cost of an order computed?')
  vim.wait(LONG, function() return done end, 500)
  say('CHAT_DONE', tostring(done))
  say('REPLY', tc.chat.replies[id] or '')
  local open = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then table.insert(open, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':.')) end
  end
  say('LOADED', table.concat(open, ' '))
  lib.stop_all(5000)
end)
lib.finish(ok, err)
