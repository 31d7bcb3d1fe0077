// The official TypeScript SDK as a client that checks: it validates every
// structured result against the tool's declared `outputSchema` (ajv, once
// `listTools` has been read), runs a cell past the root's configured eval
// budget, and starts a server whose configuration file is bad. Driven by
// tests/it/sdk_client_mcp.rs with a JSON argument { bin, root, bad_root,
// node_modules, path, url?, token? } and reports one JSON line of findings on stdout; the
// test decides. Everything else goes to stderr.
import { createRequire } from 'node:module';
import path from 'node:path';

const args = JSON.parse(process.argv[2]);
const require = createRequire(path.join(args.node_modules, 'resolve-from-here.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const env = { ...process.env, PATH: args.path, AGENT_TOOLS_LOG: 'warn' };
const findings = {};
const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// 1. Every tool's outputSchema, and every structured result checked by the SDK.
{
  // With `url` (and `token`), the run of a running `serve --http` host; else a stdio server.
  const transport = args.url
    ? new StreamableHTTPClientTransport(new URL(args.url), {
        requestInit: { headers: { Authorization: `Bearer ${args.token}` } },
      })
    : new StdioClientTransport({
        command: args.bin,
        args: ['serve', '--root', args.root, '--cap', 'exec'],
        env,
        stderr: 'inherit',
      });
  const client = new Client({ name: 'agent-tools-sdk-checks', version: '0.0.0' });
  const errors = [];
  client.onerror = (error) => errors.push(String(error));
  await client.connect(transport);
  const { tools } = await client.listTools();
  findings.tools = Object.fromEntries(tools.map((t) => [t.name, t.outputSchema ?? null]));

  const calls = [];
  const call = async (name, args) => {
    try {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
      calls.push({
        name,
        args,
        ok: true,
        is_error: result.isError ?? false,
        structured: result.structuredContent ?? null,
        text: text(result).slice(0, 400),
      });
      return result.structuredContent;
    } catch (error) {
      // A structured value that does not validate is thrown here by the SDK.
      calls.push({ name, args, ok: false, error: String(error) });
      return undefined;
    }
  };
  await call('ast_grep', { pattern: 'print($$$A)', language: 'python' });
  await call('ast_grep', { pattern: 'def $F($$$ARGS):\n    $$$BODY', language: 'python' });
  const staged = await call('ast_edit', { pattern: 'print($$$A)', rewrite: 'log($$$A)', language: 'python' });
  await call('resolve', { edit_id: staged?.edit_id ?? 'edit_1', action: 'accept' });
  await call('write', { path: 'new_module.py', content: 'def answer():\n    return 42\n' });
  await call('edit', { path: 'new_module.py', old_string: 'return 42', new_string: 'return undefined_name' });
  await call('apply_patch', {
    patch: '*** Begin Patch\n*** Add File: notes.txt\n+kept\n*** Update File: new_module.py\n@@\n-    return undefined_name\n+    return 42\n*** End Patch',
  });
  await call('lsp', { action: 'diagnostics', file: 'app.py' });
  await call('lsp', { action: 'hover', file: 'app.py', line: 5, symbol: 'greet' });
  await call('lsp', { action: 'references', file: 'app.py', line: 1, symbol: 'greet' });
  await call('lsp', { action: 'symbols', file: 'app.py' });
  await call('lsp', { action: 'status' });
  await call('lsp_rename', { file: 'app.py', line: 1, symbol: 'greet', new_name: 'welcome' });
  await call('debug', { op: 'adapters' });
  await call('debug', { op: 'status' });
  await call('debug', { op: 'breakpoints', file: 'app.py', lines: [2] });
  await call('eval', { code: 'print("hi")\n{"a": 1}', description: 'a cell with output and a value' });
  findings.calls = calls;

  // 2. The root's agent-tools.toml sets the eval budget: a sleeping cell is interrupted by it.
  const started = Date.now();
  try {
    const result = await client.callTool(
      { name: 'eval', arguments: { code: 'import time\ntime.sleep(60)', description: 'sleep past the budget' } },
      undefined,
      { timeout: 120_000 },
    );
    findings.budget = {
      ok: true,
      is_error: result.isError ?? false,
      text: text(result),
      structured: result.structuredContent ?? null,
      seconds: (Date.now() - started) / 1000,
    };
  } catch (error) {
    findings.budget = { ok: false, error: String(error), seconds: (Date.now() - started) / 1000 };
  }
  // What the client reported while it worked; closing an HTTP transport aborts its own
  // SSE stream, which the SDK reports too (`AbortError`), so that is kept apart.
  findings.errors = [...errors];
  await client.close();
  findings.closing_errors = errors.slice(findings.errors.length);
}

// 3. A bad configuration file: the server refuses to start and says where.
{
  const transport = new StdioClientTransport({
    command: args.bin,
    args: ['serve', '--root', args.bad_root],
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const client = new Client({ name: 'agent-tools-sdk-checks', version: '0.0.0' });
  try {
    await client.connect(transport);
    findings.bad_config = { connected: true, stderr };
    await client.close();
  } catch (error) {
    // Let the pipe drain what the process wrote before it exited.
    await new Promise((resolve) => setTimeout(resolve, 200));
    findings.bad_config = { connected: false, error: String(error), stderr };
  }
}

process.stdout.write(JSON.stringify(findings) + '\n');
