// A second real MCP client for `agent-tools serve`: the official TypeScript
// SDK (@modelcontextprotocol/sdk, installed by `cargo xtask setup` into
// .tools/node). Driven by tests/it/sdk_client_mcp.rs, which passes a JSON
// argument { bin, root, node_modules, timeout_ms, sleep_s } and reads one
// JSON line of findings from stdout; the test decides, this script only
// reports. Everything else goes to stderr. It speaks MCP 2025-11-25 (the
// SDK's 1.x line has no 2026-07-28), so questions arrive as elicitation requests.
import { createRequire } from 'node:module';
import path from 'node:path';

const args = JSON.parse(process.argv[2]);
const require = createRequire(path.join(args.node_modules, 'resolve-from-here.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const transport = new StdioClientTransport({
  command: args.bin,
  args: ['serve', '--root', args.root, '--cap', 'exec'],
  env: { ...process.env, AGENT_TOOLS_LOG: 'warn' },
  stderr: 'inherit',
});
const client = new Client({ name: 'agent-tools-sdk-test', version: '0.0.0' }, { capabilities: { elicitation: {} } });
// The human answers after longer than the request timeout.
client.setRequestHandler(ElicitRequestSchema, async () => {
  await new Promise((resolve) => setTimeout(resolve, args.sleep_s * 1000));
  return { action: 'accept', content: { choice: 'sqlite' } };
});
const errors = [];
client.onerror = (error) => errors.push(String(error));
await client.connect(transport);
// What each request heard, in the order it was read off the wire, before the SDK
// dispatches it: the SDK handles a response at once but a notification a microtask
// later, so a progress notification read in the same chunk as its response reaches
// its handler after the response has removed it ("unknown token").
const wire = {};
const dispatch = transport.onmessage;
transport.onmessage = (message, extra) => {
  if (message.method === 'notifications/progress') {
    (wire[message.params.progressToken] ??= []).push('progress');
  } else if (message.id !== undefined && ('result' in message || 'error' in message)) {
    (wire[message.id] ??= []).push('response');
  }
  dispatch(message, extra);
};

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const eval_ = (code, options) =>
  client.callTool({ name: 'eval', arguments: { code, description: 'a step of the SDK client test' } }, undefined, options);
const findings = {};

// State to find again after the cancellation.
findings.set = text(await eval_('kept = 41'));

// 1. A cell longer than the request timeout returns, because progress resets it.
{
  const progress = [];
  let answeredAt = null;
  const started = Date.now();
  try {
    const result = await eval_(`import time\nprint('sleeping', flush=True)\ntime.sleep(${args.sleep_s})\n'slept'`, {
      timeout: args.timeout_ms,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push({ ...p, at: Date.now() - started, after_answer: answeredAt !== null }),
    });
    answeredAt = Date.now() - started;
    findings.long = { ok: true, text: text(result), is_error: result.isError ?? false, seconds: answeredAt / 1000, progress };
  } catch (error) {
    findings.long = { ok: false, error: String(error), seconds: (Date.now() - started) / 1000, progress };
  }
}

// 2. A human who answers after the request timeout: the answer comes back.
{
  const progress = [];
  const started = Date.now();
  try {
    const result = await client.callTool(
      { name: 'ask_user', arguments: { question: 'Which database?', options: [{ label: 'postgres' }, { label: 'sqlite' }] } },
      undefined,
      { timeout: args.timeout_ms, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) },
    );
    findings.ask = { ok: true, text: text(result), seconds: (Date.now() - started) / 1000, progress };
  } catch (error) {
    findings.ask = { ok: false, error: String(error), seconds: (Date.now() - started) / 1000, progress };
  }
}

// 3. A call without a progress token hears no progress (the SDK reports a
// notification for a token it did not give as an error).
{
  const before = errors.length;
  await eval_('import time\ntime.sleep(3)', { timeout: 60_000 });
  findings.untracked_errors = errors.slice(before);
}

// 4. A runaway cell cancelled through the SDK's AbortSignal frees the kernel.
{
  const controller = new AbortController();
  const progress = [];
  const running = eval_('print("spinning", flush=True)\nwhile True:\n    pass', {
    signal: controller.signal,
    timeout: 120_000,
    onprogress: (p) => {
      progress.push(p);
      controller.abort('the user pressed stop');
    },
  });
  let outcome;
  try {
    outcome = { resolved: text(await running) };
  } catch (error) {
    outcome = { rejected: String(error) };
  }
  const started = Date.now();
  const next = await eval_('kept + 1', { timeout: 60_000 });
  findings.cancel = { ...outcome, progress, next: text(next), next_seconds: (Date.now() - started) / 1000 };
}

await client.close();

// 5. serve --ask: the approval card, allowed then denied.
{
  const asked = new Client({ name: 'agent-tools-sdk-test', version: '0.0.0' }, { capabilities: { elicitation: {} } });
  const replies = ['allow once', 'deny'];
  const shown = [];
  asked.setRequestHandler(ElicitRequestSchema, async (request) => {
    shown.push(request.params.message.split('\n')[0]);
    return { action: 'accept', content: { choice: replies.shift() } };
  });
  await asked.connect(new StdioClientTransport({
    command: args.bin,
    args: ['serve', '--root', args.root, '--cap', 'write', '--ask'],
    env: { ...process.env, AGENT_TOOLS_LOG: 'warn' },
    stderr: 'inherit',
  }));
  const write = async (file) => {
    const result = await asked.callTool({ name: 'write', arguments: { path: file, content: `${file}\n` } });
    return { text: text(result), is_error: result.isError ?? false };
  };
  findings.approval = { allowed: await write('allowed.txt'), denied: await write('denied.txt'), shown };
  await asked.close();
}
findings.errors = errors;
findings.wire = wire;
process.stdout.write(JSON.stringify(findings) + '\n');
