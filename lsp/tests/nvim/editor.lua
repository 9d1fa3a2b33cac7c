-- Drives xir-lsp from headless Neovim (0.7 API, which later versions keep):
-- opens $XIR_FILE, waits for diagnostics, hovers a value, jumps to a
-- block's definition, applies the code action of the diagnostic and waits
-- for the diagnostics to clear, then stops the server (which must exit 0).
-- Each result is a `key=value` line in $XIR_OUT, which lsp/tests/neovim.rs
-- asserts on.
local out = {}
local server_exit = nil
local function record(k, v)
  table.insert(out, k .. '=' .. tostring(v):gsub('\n', '\\n'))
end
local function finish()
  local f = assert(io.open(os.getenv('XIR_OUT'), 'w'))
  f:write(table.concat(out, '\n') .. '\n')
  f:close()
  vim.cmd('qall!')
end

-- 0-based line and byte column of the first `needle` in the buffer.
local function find(buf, needle)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  error('not in the buffer: ' .. needle)
end

local ok, err = pcall(function()
  local file = os.getenv('XIR_FILE')
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = 'xir-lsp',
    cmd = { os.getenv('XIR_LSP_BIN') },
    root_dir = vim.fn.fnamemodify(file, ':h'),
    on_exit = function(code) server_exit = code end,
  })
  record('started', id ~= nil)
  vim.lsp.buf_attach_client(buf, id)
  local client = vim.lsp.get_client_by_id(id)
  local uri = vim.uri_from_bufnr(buf)
  local function at(needle, delta)
    local line, col = find(buf, needle)
    return { textDocument = { uri = uri }, position = { line = line, character = col + (delta or 0) } }
  end

  record('diagnostics_arrived', vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20))
  local d = vim.diagnostic.get(buf)[1]
  record('diagnostic', string.format('%d:%d [%s] %s', d.lnum, d.col, d.code, d.message))

  local hover = client.request_sync('textDocument/hover', at('%ax, %yi', 1), 10000, buf)
  record('hover', hover.result.contents.value)

  local def = client.request_sync('textDocument/definition', at('target ^done', 8), 10000, buf)
  vim.lsp.util.jump_to_location(def.result, client.offset_encoding)
  local cursor = vim.api.nvim_win_get_cursor(0)
  record('jumped_to', string.format('%d:%d %s', cursor[1], cursor[2], vim.api.nvim_get_current_line()))

  -- vim.diagnostic keeps the range as lnum/col (bytes; the line is ASCII).
  local range = { start = { line = d.lnum, character = d.col }, ['end'] = { line = d.end_lnum, character = d.end_col } }
  local lsp_diag = { range = range, message = d.message, code = d.code, severity = d.severity, source = d.source }
  local actions = client.request_sync('textDocument/codeAction', {
    textDocument = { uri = uri },
    range = range,
    context = { diagnostics = { lsp_diag } },
  }, 10000, buf)
  assert(actions and actions.result, 'no code actions: ' .. vim.inspect(actions))
  local action = actions.result[1]
  record('action', action.title)
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  local line = find(buf, '%r =')
  record('fixed_line', vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1])
  record('diagnostics_cleared', vim.wait(30000, function() return #vim.diagnostic.get(buf) == 0 end, 20))
  vim.lsp.stop_client(id)
  vim.wait(30000, function() return server_exit ~= nil end, 20)
  record('server_exit', server_exit)
end)
if not ok then
  record('error', err)
end
finish()
