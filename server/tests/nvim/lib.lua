-- What the headless scripts share: their output file, the LSP clients on any
-- Neovim from 0.7 on, and a record of every deprecated Neovim function called
-- while they run (the plugin must call none on the Neovim it runs on).
--   local lib = dofile(os.getenv('TINYCODER_NVIM_LIB'))
local L = {}

local out = assert(io.open(os.getenv('TINYCODER_OUT'), 'w'))

--- Writes one `KEY\tvalue...` line (newlines escaped) that the Rust side reads.
function L.say(...)
  out:write((table.concat({ ... }, '\t'):gsub('\n', '\\n')) .. '\n')
  out:flush()
end

--- Says which Neovim runs, and records deprecated calls as `DEPRECATED` lines.
function L.start()
  local v = vim.version()
  L.say('NVIM', string.format('%d.%d.%d', v.major, v.minor, v.patch))
  if vim.deprecate then
    local deprecate = vim.deprecate
    vim.deprecate = function(name, alternative, ...)
      L.say('DEPRECATED', tostring(name), tostring(alternative), debug.traceback('', 2))
      return deprecate(name, alternative, ...)
    end
  end
end

--- The LSP clients (of `bufnr` when given) with the calls of this Neovim.
function L.clients(bufnr)
  if vim.lsp.get_clients then return vim.lsp.get_clients(bufnr and { bufnr = bufnr } or nil) end
  if bufnr then return vim.lsp.buf_get_clients(bufnr) end
  return vim.lsp.get_active_clients()
end

--- Stops every client and waits up to `ms` for them to exit.
function L.stop_all(ms)
  for _, c in pairs(L.clients()) do
    if vim.fn.has('nvim-0.11') == 1 then c:stop() else c.stop() end
  end
  vim.wait(ms, function() return #L.clients() == 0 end, 50)
end

--- Ends the run: an `ERROR` line for a failure, then `DONE`, and quits.
function L.finish(ok, err)
  if not ok then L.say('ERROR', tostring(err)) end
  L.say('DONE')
  out:close()
  vim.cmd('qa!')
end

return L
