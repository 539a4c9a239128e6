-- tinycoder for Neovim: starts `tinycoder lsp` for Rust and Python buffers.
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and 0.8+ (vim.lsp.start).
local M = {}

local defaults = {
  cmd = { 'tinycoder', 'lsp' },
  filetypes = { 'rust', 'python' },
  -- Shaped like tinycoder.toml; passed as initializationOptions.
  init_options = vim.empty_dict(),
  root_markers = { '.git', 'Cargo.toml', 'pyproject.toml', '.tinycoder.toml' },
}

local clients = {} -- root dir -> client id (Neovim 0.7 path)

local function find_root(bufnr, markers)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local found = vim.fn.finddir('.git', dir .. ';')
  for _, m in ipairs(markers) do
    local f = vim.fn.findfile(m, dir .. ';')
    if f ~= '' then return vim.fn.fnamemodify(f, ':p:h') end
    local d = vim.fn.finddir(m, dir .. ';')
    if d ~= '' then return vim.fn.fnamemodify(d, ':p:h:h') end
  end
  if found ~= '' then return vim.fn.fnamemodify(found, ':p:h:h') end
  return dir
end

local function start(bufnr, opts)
  local root = find_root(bufnr, opts.root_markers)
  local config = {
    name = 'tinycoder',
    cmd = opts.cmd,
    root_dir = root,
    init_options = opts.init_options,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
  }
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = clients[root]
  if not id or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(config)
    clients[root] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
  return id
end

--- Sets tinycoder up: `require('tinycoder').setup{ cmd = {...}, init_options = {...} }`.
function M.setup(user)
  local opts = vim.tbl_deep_extend('force', defaults, user or {})
  local group = vim.api.nvim_create_augroup('tinycoder', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = opts.filetypes,
    callback = function(args) start(args.buf, opts) end,
  })
  -- `:TinycoderChat message` sends a chat turn about the current buffer and shows the reply.
  vim.api.nvim_create_user_command('TinycoderChat', function(cmd)
    local bufnr = vim.api.nvim_get_current_buf()
    local params = { message = cmd.args, textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
    vim.lsp.buf_request(bufnr, 'tinycoder/chat', params, function(err, result)
      if err then
        vim.notify('tinycoder: ' .. err.message, vim.log.levels.ERROR)
      else
        vim.notify(result.reply)
      end
    end)
  end, { nargs = '+' })
  return opts
end

return M
