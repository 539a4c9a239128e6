-- tinycoder for Neovim: starts `tinycoder lsp` for Rust and Python buffers and
-- adds the commands of every flow, a diff preview before an agent patch lands
-- (preview.lua), a streaming chat buffer (chat.lua) and ghost text from the
-- model as you type (ghost.lua).
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and 0.8+ (vim.lsp.start).
local preview = require('tinycoder.preview')
local chat = require('tinycoder.chat')
local ghost = require('tinycoder.ghost')

local M = {}

local defaults = {
  cmd = { 'tinycoder', 'lsp' },
  filetypes = { 'rust', 'python' },
  -- Shaped like tinycoder.toml; passed as initializationOptions.
  init_options = vim.empty_dict(),
  root_markers = { '.git', 'Cargo.toml', 'pyproject.toml', '.tinycoder.toml' },
  -- Preview agent patches as a diff before they are applied (false: apply as the server sends them).
  preview = true,
  -- Ghost text (inline completion): false switches it off; a table overrides ghost.lua's options
  -- (keys, debounce, `filetypes = { rust = false }`). :TinycoderCompletion on|off|toggle [filetype].
  completion = {},
}

M.options = vim.deepcopy(defaults)
-- The job id of the last command that started one (for :TinycoderCancel).
M.last_job = nil
-- The last document the server asked to show (an answer, a diff).
M.last_document = nil

local clients = {} -- root dir -> client id (Neovim 0.7 path)

local function notify(msg, level)
  vim.notify('tinycoder: ' .. msg, level or vim.log.levels.INFO)
end

--- Sends `method` to `client` (Neovim 0.7 to 0.11+ calling conventions).
function M.request(client, method, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function find_root(bufnr, markers)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  for _, m in ipairs(markers) do
    local f = vim.fn.findfile(m, dir .. ';')
    if f ~= '' then return vim.fn.fnamemodify(f, ':p:h') end
    local d = vim.fn.finddir(m, dir .. ';')
    if d ~= '' then return vim.fn.fnamemodify(d, ':p:h:h') end
  end
  return dir
end

local function show_document(_, params)
  local fname = vim.uri_to_fname(params.uri)
  M.last_document = fname
  vim.schedule(function()
    vim.cmd('rightbelow vsplit ' .. vim.fn.fnameescape(fname))
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'TinycoderDocument' })
  end)
  return { success = true }
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = vim.tbl_deep_extend('force', caps.workspace.workspaceEdit or {}, {
    documentChanges = true,
    changeAnnotationSupport = { groupsOnLabel = true },
  })
  caps.window = caps.window or {}
  caps.window.showDocument = { support = true }
  -- The server may ask for a line of text (a hint after failed attempts).
  caps.experimental = vim.tbl_extend('force', caps.experimental or {}, { tinycoderInputText = true })
  -- Ghost text shows the suggestion: the server then adds none to completion menus.
  if M.options.completion ~= false then
    caps.textDocument = caps.textDocument or {}
    caps.textDocument.inlineCompletion = { dynamicRegistration = false }
  end
  return caps
end

local function start(bufnr, opts)
  local root = find_root(bufnr, opts.root_markers)
  local handlers = {
    ['window/showDocument'] = show_document,
    ['tinycoder/chatDelta'] = chat.delta_handler,
    ['tinycoder/inputText'] = function(_, params)
      local ok, text = pcall(vim.fn.input, { prompt = (params and params.prompt or 'tinycoder') .. ': ', cancelreturn = '' })
      if not ok or text == '' then return vim.NIL end
      return text
    end,
  }
  if opts.preview then handlers['workspace/applyEdit'] = preview.apply_edit_handler end
  local config = {
    name = 'tinycoder',
    cmd = opts.cmd,
    root_dir = root,
    init_options = opts.init_options,
    capabilities = capabilities(),
    handlers = handlers,
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

--- The tinycoder client of `bufnr` (nil when none is attached; said unless `quiet`).
function M.client(bufnr, quiet)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local list = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr, name = 'tinycoder' })
    or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(list) do
    if c.name == 'tinycoder' then return c end
  end
  if not quiet then notify('no tinycoder server for this buffer', vim.log.levels.WARN) end
  return nil
end

--- Runs a tinycoder command with one argument; remembers its job.
function M.execute(command, argument, on_result)
  local b = vim.api.nvim_get_current_buf()
  local client = M.client(b)
  if not client then return end
  local params = { command = command, arguments = { argument } }
  M.request(client, 'workspace/executeCommand', params, function(err, result)
    if err then return notify(command .. ': ' .. tostring(err.message or err), vim.log.levels.ERROR) end
    if type(result) == 'table' and result.jobId then M.last_job = result.jobId end
    if on_result then on_result(result) end
  end, b)
end

-- The selection of a command with a range, else the cursor, as an LSP range.
local function range_of(cmd)
  if cmd and cmd.range and cmd.range > 0 then
    return { start = { line = cmd.line1 - 1, character = 0 }, ['end'] = { line = cmd.line2, character = 0 } }
  end
  local c = vim.api.nvim_win_get_cursor(0)
  local pos = { line = c[1] - 1, character = c[2] }
  return { start = pos, ['end'] = pos }
end

local function target(cmd)
  return { uri = vim.uri_from_bufnr(0), range = range_of(cmd) }
end

-- A vim.diagnostic item as an LSP diagnostic.
local function to_lsp(d)
  local lsp = (d.user_data and d.user_data.lsp) or {}
  return {
    range = {
      start = { line = d.lnum, character = d.col },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
    severity = d.severity, message = d.message, source = d.source, code = d.code or lsp.code, data = lsp.data,
  }
end

--- :TinycoderFix — the tinycoder quick-fix for the diagnostics on the cursor's line.
function M.fix()
  local b = vim.api.nvim_get_current_buf()
  local client = M.client(b)
  if not client then return end
  local diags = vim.diagnostic.get(b, { lnum = vim.api.nvim_win_get_cursor(0)[1] - 1 })
  if #diags == 0 then return notify('no diagnostic on this line', vim.log.levels.WARN) end
  local lsp_diags = vim.tbl_map(to_lsp, diags)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(b) },
    range = lsp_diags[1].range,
    context = { diagnostics = lsp_diags, only = { 'quickfix' } },
  }
  M.request(client, 'textDocument/codeAction', params, function(err, actions)
    if err then return notify(tostring(err.message or err), vim.log.levels.ERROR) end
    local chosen
    for _, a in ipairs(actions or {}) do
      if a.command and a.command.command == 'tinycoder.fix' and (not chosen or a.isPreferred) then chosen = a end
    end
    if not chosen then return notify('no tinycoder quick-fix here', vim.log.levels.WARN) end
    notify(chosen.title)
    M.execute(chosen.command.command, chosen.command.arguments[1])
  end, b)
end

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

local function define_commands()
  command('TinycoderFix', M.fix)
  command('TinycoderEdit', function(cmd)
    local t = target(cmd)
    local function go(instruction)
      if instruction and instruction ~= '' then t.instruction = instruction end
      M.execute('tinycoder.edit', t)
    end
    if cmd.args ~= '' then return go(cmd.args) end
    vim.ui.input({ prompt = 'tinycoder: change the selection how? ' }, go)
  end, { nargs = '*', range = true })
  command('TinycoderDocument', function(cmd) M.execute('tinycoder.document', target(cmd)) end, { range = true })
  command('TinycoderTests', function(cmd) M.execute('tinycoder.generateTests', target(cmd)) end, { range = true })
  command('TinycoderExplain', function(cmd)
    chat.open()
    M.execute('tinycoder.explain', target(cmd))
  end, { range = true })
  command('TinycoderAsk', function(cmd)
    chat.open()
    chat.append('\n\n> ' .. cmd.args .. '\n\n')
    M.execute('tinycoder.ask', { question = cmd.args })
  end, { nargs = '+' })
  command('TinycoderChat', function(cmd)
    local client = M.client()
    if not client then return end
    local range = (cmd.range and cmd.range > 0) and range_of(cmd) or nil
    chat.send(client, cmd.args, range)
  end, { nargs = '+', range = true })
  command('TinycoderRun', function(cmd)
    local function go(request)
      if request and request ~= '' then M.execute('tinycoder.run', { request = request }) end
    end
    if cmd.args ~= '' then return go(cmd.args) end
    vim.ui.input({ prompt = 'tinycoder: what should change (it may span files)? ' }, go)
  end, { nargs = '*' })
  command('TinycoderRunTests', function() M.execute('tinycoder.runTests', nil) end)
  command('TinycoderCancel', function(cmd)
    local id = cmd.args ~= '' and cmd.args or M.last_job
    if not id then return notify('no tinycoder job to cancel', vim.log.levels.WARN) end
    M.execute('tinycoder.cancel', { jobId = id }, function(r) notify(r and r.cancelled and 'cancelled' or 'nothing to cancel') end)
  end, { nargs = '?' })
  command('TinycoderCompletion', function(cmd)
    local how, filetype = cmd.fargs[1] or 'toggle', cmd.fargs[2]
    if how ~= 'on' and how ~= 'off' and how ~= 'toggle' then
      return notify('TinycoderCompletion on|off|toggle [filetype]', vim.log.levels.WARN)
    end
    ghost.set(how, filetype)
    local where = (filetype and filetype ~= '') and (' for ' .. filetype) or ''
    local on = ghost.enabled_for(vim.api.nvim_get_current_buf())
    if filetype and filetype ~= '' then on = ghost.options.filetypes[filetype] ~= false end
    notify('suggestions ' .. (on and 'on' or 'off') .. where)
  end, { nargs = '*' })
  command('TinycoderUndo', preview.undo)
  command('TinycoderAccept', preview.accept)
  command('TinycoderReject', preview.reject)
end

--- Sets tinycoder up: `require('tinycoder').setup{ cmd = {...}, init_options = {...} }`.
function M.setup(user)
  local opts = vim.tbl_deep_extend('force', defaults, user or {})
  M.options = opts
  local group = vim.api.nvim_create_augroup('tinycoder', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = opts.filetypes,
    callback = function(args)
      if vim.bo[args.buf].buftype == '' then start(args.buf, opts) end
    end,
  })
  define_commands()
  if opts.completion ~= false then ghost.setup(opts.completion, group, opts.filetypes) end
  return opts
end

M.preview = preview
M.chat = chat
M.ghost = ghost

return M
