-- Neovim's own LSP client (0.7 and later) runs `mnemo serve --stdio` on a
-- workspace, edits the body of a function in cart.py and writes it, twice
-- within the save window, then stops the client (shutdown, exit) and quits.
-- Driven by TestNeovim… in neovim_test.go, which reads what Mnemo
-- remembered. Any error quits with status 1 after printing it to stderr.
local function run()
  local root = assert(vim.env.MNEMO_NVIM_ROOT, 'MNEMO_NVIM_ROOT is not set')
  local bin = assert(vim.env.MNEMO_NVIM_BIN, 'MNEMO_NVIM_BIN is not set')
  local id = vim.lsp.start_client({
    name = 'mnemo',
    cmd = { bin, 'serve', '--stdio' },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = 'billing-api' } },
    init_options = { clientKind = 'neovim', protocolVersion = 1, contentSessionId = 'nvim-test', saveWindowSeconds = 30 },
    flags = { exit_timeout = 5000 },
  })
  assert(id, 'the client did not start')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/cart.py'))
  vim.lsp.buf_attach_client(0, id)
  local ok = vim.wait(20000, function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized == true
  end, 20)
  assert(ok, 'the server did not initialize')
  -- Two writes of the same function's change, as a person saves twice.
  vim.api.nvim_buf_set_lines(0, 1, 1, false, { '    items = applyLoyaltyDiscount(items)' })
  vim.cmd('write')
  vim.api.nvim_buf_set_lines(0, 2, 2, false, { '    items = dropEmptyLines(items)' })
  vim.cmd('write')
  -- Stop the client: shutdown remembers the window's saves, then exit.
  vim.lsp.stop_client(id)
  ok = vim.wait(20000, function()
    return vim.lsp.client_is_stopped(id)
  end, 20)
  assert(ok, 'the server did not stop')
end

local ok, err = pcall(run)
if not ok then
  io.stderr:write('save.lua: ' .. tostring(err) .. '\n')
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
