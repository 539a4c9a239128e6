-- Headless check of the chat's streamed reply (no server, no model): the server's
-- deltas and its response travel on separate queues, so the response can come
-- before the last delta. The whole reply from the response completes the buffer,
-- and a delta that comes after it is not shown twice.
local lib = dofile(os.getenv('TINYCODER_NVIM_LIB'))
local say = lib.say

vim.opt.runtimepath:append(os.getenv('TINYCODER_PLUGIN'))
local ok, err = pcall(function()
  lib.start()
  local chat = require('tinycoder.chat')
  local buf = chat.open()
  local text = function() return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') end
  local footer = '\n\nSources: [shop/shipping.py:4](file:///p/shop/shipping.py#L4)'

  -- The response overtakes the footer's delta.
  chat.delta_handler(nil, { requestId = 'a', delta = 'Shipping is ' })
  chat.delta_handler(nil, { requestId = 'a', delta = 'doubled.' })
  chat.complete('a', 'Shipping is doubled.' .. footer)
  chat.delta_handler(nil, { requestId = 'a', delta = footer })
  say('LATE_REPLY', chat.replies['a'])
  say('LATE_BUFFER', text())

  -- The usual order: every delta, then the response, which adds nothing.
  chat.delta_handler(nil, { requestId = 'b', delta = 'Two.' })
  chat.complete('b', 'Two.')
  say('ORDERED_REPLY', chat.replies['b'])
  say('ORDERED_BUFFER', text())
end)
lib.finish(ok, err)
