-- The diff preview of an agent patch: each changed file in a tab, the buffer on
-- the left and the proposed text on the right (`:diffthis`), until the user
-- accepts (`ga`, :TinycoderAccept) or rejects (`gr`, :TinycoderReject) it.
--
-- Neovim answers a server's `workspace/applyEdit` from the handler's return
-- value, so a preview cannot hold the answer open: tinycoder's patch is answered
-- "not applied (shown for review)", and accepting applies the same edit here,
-- then asks the server to run the tests again (tinycoder.runTests).
local M = {}

local util = vim.lsp.util

-- The open preview: { edit, client_id, encoding, tabs, source_buffers, scratch_buffers, ticks }.
-- `ticks` holds each source buffer's `b:changedtick` when the preview opened: a
-- buffer edited since then makes the patch stale, and Accept refuses it.
M.pending = nil
-- The last accepted patch, for :TinycoderUndo: { {bufnr, before, after}, ... }.
M.last_applied = nil

local function notify(msg, level)
  vim.notify('tinycoder: ' .. msg, level or vim.log.levels.INFO)
end

-- Every (uri, text edits) of a workspace edit, in order.
local function file_edits(edit)
  local out = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.edits then
      table.insert(out, { uri = change.textDocument.uri, edits = change.edits })
    end
  end
  for uri, edits in pairs(edit.changes or {}) do
    table.insert(out, { uri = uri, edits = edits })
  end
  return out
end

local function map(bufnr, lhs, fn, desc)
  vim.keymap.set('n', lhs, fn, { buffer = bufnr, nowait = true, desc = desc })
end

local function unmap(bufnr, lhs)
  pcall(vim.keymap.del, 'n', lhs, { buffer = bufnr })
end

local function close()
  local p = M.pending
  M.pending = nil
  if not p then return end
  for _, b in ipairs(p.source_buffers) do
    unmap(b, 'ga')
    unmap(b, 'gr')
    if vim.api.nvim_buf_is_valid(b) then
      for _, w in ipairs(vim.fn.win_findbuf(b)) do
        vim.api.nvim_win_call(w, function() vim.cmd('diffoff') end)
      end
    end
  end
  for _, b in ipairs(p.scratch_buffers) do
    if vim.api.nvim_buf_is_valid(b) then vim.api.nvim_buf_delete(b, { force = true }) end
  end
  for _, t in ipairs(p.tabs) do
    if vim.api.nvim_tabpage_is_valid(t) and #vim.api.nvim_list_tabpages() > 1 then
      vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(t))
    end
  end
end

--- Opens the preview of `edit` (a WorkspaceEdit) sent by the client `client_id`.
function M.show(edit, client_id, label)
  if M.pending then close() end
  local client = vim.lsp.get_client_by_id(client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local p = { edit = edit, client_id = client_id, encoding = encoding, tabs = {}, source_buffers = {}, scratch_buffers = {},
    ticks = {} }
  for _, fe in ipairs(file_edits(edit)) do
    local bufnr = vim.uri_to_bufnr(fe.uri)
    vim.fn.bufload(bufnr)
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    local scratch = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(scratch, 0, -1, false, lines)
    util.apply_text_edits(fe.edits, scratch, encoding)
    local ft = vim.bo[bufnr].filetype
    if ft == '' then
      local ok, found = pcall(vim.filetype.match, { buf = bufnr })
      ft = ok and found or ''
    end
    -- `syntax`, not `filetype`: a filetype would start language servers on the scratch buffer.
    vim.bo[scratch].syntax = ft or ''
    vim.bo[scratch].modifiable = false
    pcall(vim.api.nvim_buf_set_name, scratch, 'tinycoder://proposed/' .. vim.fn.fnamemodify(vim.uri_to_fname(fe.uri), ':.'))
    vim.cmd('tabnew')
    table.insert(p.tabs, vim.api.nvim_get_current_tabpage())
    local empty = vim.api.nvim_get_current_buf()
    vim.api.nvim_win_set_buf(0, bufnr)
    if empty ~= bufnr and vim.api.nvim_buf_is_valid(empty) and vim.api.nvim_buf_get_name(empty) == '' then
      pcall(vim.api.nvim_buf_delete, empty, { force = true })
    end
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit')
    vim.api.nvim_win_set_buf(0, scratch)
    vim.cmd('diffthis')
    for _, b in ipairs({ bufnr, scratch }) do
      map(b, 'ga', M.accept, 'tinycoder: accept the patch')
      map(b, 'gr', M.reject, 'tinycoder: reject the patch')
    end
    table.insert(p.source_buffers, bufnr)
    table.insert(p.scratch_buffers, scratch)
    p.ticks[bufnr] = vim.api.nvim_buf_get_changedtick(bufnr)
  end
  M.pending = p
  local annotation = (edit.changeAnnotations or {})['tinycoder.patch']
  label = annotation and annotation.label or label
  notify((label and (label .. ' — ') or '') .. 'ga accepts, gr rejects (:TinycoderAccept / :TinycoderReject)')
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'TinycoderPreview' })
end

-- The first source buffer edited since the preview opened, or nil. Neovim's own
-- version check only prints "newer than edits" and applies nothing, so the
-- plugin checks first and says so.
local function stale_buffer(p)
  for _, b in ipairs(p.source_buffers) do
    if not vim.api.nvim_buf_is_valid(b) or vim.api.nvim_buf_get_changedtick(b) ~= p.ticks[b] then return b end
  end
  return nil
end

--- Applies the previewed patch, remembers it for :TinycoderUndo, and runs the tests again.
--- A buffer edited since the preview opened makes the patch stale: nothing is applied.
function M.accept()
  local p = M.pending
  if not p then return notify('no patch to accept', vim.log.levels.WARN) end
  local stale = stale_buffer(p)
  if stale then
    close()
    local name = vim.api.nvim_buf_is_valid(stale) and vim.fn.fnamemodify(vim.api.nvim_buf_get_name(stale), ':.') or 'a file'
    return notify(name .. ' changed since the preview, so the patch was not applied (your edits are kept); '
      .. 'run the fix again to get a patch of the current text', vim.log.levels.WARN)
  end
  local before = {}
  for _, b in ipairs(p.source_buffers) do before[b] = vim.api.nvim_buf_get_lines(b, 0, -1, false) end
  local ok, err = pcall(util.apply_workspace_edit, p.edit, p.encoding)
  close()
  if not ok then return notify('the patch could not be applied: ' .. tostring(err), vim.log.levels.ERROR) end
  M.last_applied = {}
  for b, lines in pairs(before) do
    table.insert(M.last_applied, { bufnr = b, before = lines, after = vim.api.nvim_buf_get_lines(b, 0, -1, false) })
  end
  notify('patch applied; running the tests again')
  -- After the buffers' didChange has gone out (Neovim debounces it).
  vim.defer_fn(function()
    local client = vim.lsp.get_client_by_id(p.client_id)
    if client then
      require('tinycoder').request(client, 'workspace/executeCommand', { command = 'tinycoder.runTests', arguments = {} },
        function() end)
    end
  end, 500)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'TinycoderApplied' })
end

--- Closes the preview; nothing changes.
function M.reject()
  if not M.pending then return notify('no patch to reject', vim.log.levels.WARN) end
  close()
  notify('patch rejected')
end

--- Puts back the buffers the last accepted patch changed (when they were not edited since).
function M.undo()
  local last = M.last_applied
  if not last then return notify('no tinycoder patch to undo', vim.log.levels.WARN) end
  for _, f in ipairs(last) do
    if vim.api.nvim_buf_is_valid(f.bufnr) and vim.deep_equal(vim.api.nvim_buf_get_lines(f.bufnr, 0, -1, false), f.after) then
      vim.api.nvim_buf_set_lines(f.bufnr, 0, -1, false, f.before)
    else
      notify(vim.api.nvim_buf_get_name(f.bufnr) .. ' changed since the patch; use :undo there', vim.log.levels.WARN)
    end
  end
  M.last_applied = nil
  notify('patch undone')
end

--- The `workspace/applyEdit` handler: previews the patch and answers "not applied yet".
function M.apply_edit_handler(_, params, ctx)
  if not params or not params.edit then return { applied = false } end
  vim.schedule(function() M.show(params.edit, ctx.client_id, params.label) end)
  return { applied = false, failureReason = 'shown for review in the editor' }
end

return M
