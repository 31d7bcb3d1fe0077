// The JavaScript kernel driver, shipped inside the `kernel` crate.
//
// The host starts `node` with a small bootstrap that reads this source as the
// first frame on fd 3 and calls it with `require` and a dynamic-import
// function. Frames (one JSON object per line) then arrive on fd 3 and leave on
// fd 4. Cells are evaluated through the inspector's REPL mode, which lets later
// cells redeclare `let`/`const`/`class` and supports top-level `await`; the
// synchronous part runs inside a `vm` script with `breakOnSigint`, so SIGINT
// interrupts a busy loop without losing the kernel.
(function kernelDriver(require, dynamicImport) {
  'use strict';
  const fs = require('fs');
  const util = require('util');
  const vm = require('vm');
  const path = require('path');
  const url = require('url');
  const inspector = require('inspector');
  const Module = require('module');

  const OUT_FD = 4;
  // Through a command prefix the frames travel on stdin and stdout, moved to
  // fds 3 and 4 by a shell, and fd 1 is fd 2 (see the Python driver).
  const framesStdio = process.env.AGENT_TOOLS_KERNEL_FRAMES === 'stdio';
  delete process.env.AGENT_TOOLS_KERNEL_FRAMES;
  const session = new inspector.Session();
  session.connect();

  function writeAll(fd, buffer) {
    let offset = 0;
    while (offset < buffer.length) {
      try {
        offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
      } catch (error) {
        if (error.code === 'EAGAIN') continue;
        throw error;
      }
    }
  }

  function wellFormed(text) {
    return typeof text.toWellFormed === 'function' ? text.toWellFormed() : text;
  }

  // The newline before the frame ends any line a cell wrote to the frame pipe
  // itself, so the host skips that line and still reads this frame.
  function send(frame) {
    writeAll(OUT_FD, Buffer.from('\n' + JSON.stringify(frame) + '\n', 'utf8'));
  }

  // UTF-16 units of stream text per frame: at most 1.5 MiB of JSON, every
  // character escaped, so that no frame nears the host's frame limit (16 MiB).
  const STREAM_PIECE = 1 << 18;

  // ------------------------------------------------------------ output

  const output = { name: null, parts: [], size: 0, last: Date.now() };

  function flush() {
    if (output.parts.length) {
      const text = output.parts.join('');
      for (let start = 0; start < text.length;) {
        let end = Math.min(start + STREAM_PIECE, text.length);
        // Never between the halves of a surrogate pair.
        if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end -= 1;
        send({ t: 'stream', name: output.name, text: wellFormed(text.slice(start, end)) });
        start = end;
      }
    }
    output.name = null;
    output.parts = [];
    output.size = 0;
    output.last = Date.now();
  }

  function writeStream(name, text) {
    if (!text) return;
    if (output.name !== null && output.name !== name) flush();
    output.name = name;
    output.parts.push(text);
    output.size += text.length;
    if (output.size >= 16384 || Date.now() - output.last >= 2) flush();
  }

  function chunkText(chunk, encoding) {
    if (typeof chunk === 'string') return chunk;
    if (chunk instanceof Uint8Array) {
      return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString(
        typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8');
    }
    return String(chunk);
  }

  for (const name of ['stdout', 'stderr']) {
    const stream = process[name];
    stream.write = function write(chunk, encoding, callback) {
      writeStream(name, chunkText(chunk, encoding));
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') process.nextTick(done);
      return true;
    };
  }
  setInterval(() => { if (output.parts.length) flush(); }, 100).unref();

  // ------------------------------------------------------------ display

  function inspect(value) {
    return util.inspect(value, { depth: 4, colors: false, maxArrayLength: 100, maxStringLength: 20000, breakLength: 100 });
  }

  const MIME = Symbol.for('kernel.mime');

  function bundleOf(value) {
    if (value !== null && typeof value === 'object' && value[MIME]) {
      return Object.assign({}, value[MIME]);
    }
    return { 'text/plain': wellFormed(inspect(value)) };
  }

  function mime(bundle) {
    const data = {};
    for (const [key, item] of Object.entries(bundle)) {
      if (item instanceof Uint8Array) data[key] = Buffer.from(item).toString('base64');
      else data[key] = typeof item === 'string' ? item : JSON.stringify(item);
    }
    if (!data['text/plain']) data['text/plain'] = '<' + Object.keys(data).join(', ') + '>';
    return { [MIME]: data, [util.inspect.custom]: () => data['text/plain'] };
  }

  function display(...values) {
    for (const value of values) {
      flush();
      send({ t: 'display', data: bundleOf(value) });
    }
  }
  display.mime = (bundle) => display(mime(bundle));
  display.html = (html) => display(mime({ 'text/html': String(html), 'text/plain': String(html) }));
  display.markdown = (text) => display(mime({ 'text/markdown': String(text), 'text/plain': String(text) }));
  display.svg = (svg) => display(mime({ 'image/svg+xml': String(svg), 'text/plain': '<svg image>' }));
  display.png = (data) => display(mime({ 'image/png': typeof data === 'string' ? data : Buffer.from(data).toString('base64'), 'text/plain': '<png image>' }));
  display.json = (value) => display(mime({ 'application/json': JSON.stringify(value), 'text/plain': inspect(value) }));

  // ------------------------------------------------------------ tool bridge

  class ToolError extends Error {
    constructor(message) {
      super(message);
      this.name = 'ToolError';
    }
  }

  const pendingTools = new Map();
  let toolIds = 0;

  function tool(name, args) {
    const id = ++toolIds;
    flush();
    send({ t: 'tool', id, name: String(name), args: args === undefined ? {} : args });
    return new Promise((resolve, reject) => pendingTools.set(id, { resolve, reject }));
  }

  // ------------------------------------------------------------ globals

  function noStdin(name) {
    return function unavailable() {
      throw new Error(name + '() is not available: the kernel has no stdin; put the value in the code instead');
    };
  }

  function importFromCell(specifier) {
    let target = String(specifier);
    if (target.startsWith('./') || target.startsWith('../') || target.startsWith('/')) {
      target = url.pathToFileURL(path.resolve(process.cwd(), target)).href;
    }
    return dynamicImport(target);
  }

  Object.assign(globalThis, {
    display,
    tool,
    ToolError,
    require: Module.createRequire(path.join(process.cwd(), '[cell]')),
    prompt: noStdin('prompt'),
    alert: noStdin('alert'),
    confirm: noStdin('confirm'),
  });
  Object.defineProperty(globalThis, '__kernel_import', { value: importFromCell, enumerable: false });

  process.on('exit', () => flush());
  process.on('uncaughtException', (error) => {
    writeStream('stderr', 'Uncaught ' + (error && error.stack ? error.stack : inspect(error)) + '\n');
  });
  process.on('unhandledRejection', (reason) => {
    writeStream('stderr', 'Unhandled promise rejection: ' + (reason && reason.stack ? reason.stack : inspect(reason)) + '\n');
  });

  // ------------------------------------------------------------ execution

  function post(method, params) {
    return new Promise((resolve) => {
      session.post(method, params, (error, result) => resolve(error ? { protocolError: error } : result));
    });
  }

  const CAPTURE = Symbol.for('kernel.capture');
  async function remoteValue(remote) {
    if (!remote) return undefined;
    if (remote.objectId) {
      await post('Runtime.callFunctionOn', {
        objectId: remote.objectId,
        functionDeclaration: 'function () { globalThis[Symbol.for("kernel.capture")] = this; }',
      });
      const value = globalThis[CAPTURE];
      delete globalThis[CAPTURE];
      return value;
    }
    if ('unserializableValue' in remote) {
      const text = remote.unserializableValue;
      if (/^-?\d+n$/.test(text)) return BigInt(text.slice(0, -1));
      return Number(text === '-0' ? '-0' : text);
    }
    if (remote.type === 'undefined') return undefined;
    return remote.value;
  }

  function cellFrames(stack, cellName) {
    const lines = String(stack).split('\n');
    const kept = [];
    for (const line of lines) {
      if (/^\s+at /.test(line) && !line.includes(cellName)) {
        if (line.includes('node:inspector') || line.includes('kernel-driver')) break;
      }
      kept.push(line);
    }
    return kept;
  }

  async function reportError(details, cellName, source) {
    const thrown = await remoteValue(details.exception);
    let ename = 'Error';
    let evalue = '';
    let traceback;
    if (thrown instanceof Error) {
      ename = thrown.name || 'Error';
      evalue = thrown.message || '';
      traceback = cellFrames(thrown.stack || (ename + ': ' + evalue), cellName);
      if (thrown instanceof SyntaxError || ename === 'SyntaxError') {
        const lines = source.split('\n');
        const lineNumber = Math.min(details.lineNumber || 0, Math.max(lines.length - 1, 0));
        const sourceLine = lines[lineNumber];
        traceback = [ename + ': ' + evalue, '    at ' + cellName + ':' + (lineNumber + 1) + ':' + ((details.columnNumber || 0) + 1)];
        if (sourceLine !== undefined) traceback.push('', sourceLine, ' '.repeat(details.columnNumber || 0) + '^');
        if (/import statement|Cannot use import/.test(evalue)) {
          traceback.push('', 'hint: use `const m = await import("…")` or `require("…")` in a cell');
        }
      }
    } else {
      ename = 'Uncaught';
      evalue = inspect(thrown);
      traceback = ['Uncaught ' + evalue];
    }
    flush();
    send({ t: 'error', ename, evalue: wellFormed(evalue), traceback: traceback.map(wellFormed) });
  }

  let interruptCurrent = null;
  process.on('SIGINT', () => {
    if (interruptCurrent) interruptCurrent();
  });

  const EVAL = Symbol.for('kernel.eval');
  const runner = new vm.Script('globalThis[Symbol.for("kernel.eval")]()', { filename: 'kernel-driver-runner' });

  function rewrite(code) {
    return code.replace(/(?<![\w$.])import\s*\(/g, '__kernel_import(');
  }

  async function execute(frame) {
    output.last = 0;
    const cellName = 'cell-' + (frame.count || 0);
    const source = String(frame.code || '');
    const expression = rewrite(source) + '\n//# sourceURL=' + cellName;
    let settle;
    const settled = new Promise((resolve) => { settle = resolve; });
    globalThis[EVAL] = () => {
      session.post('Runtime.evaluate', {
        expression,
        replMode: true,
        awaitPromise: true,
        objectGroup: 'cell',
      }, (error, result) => settle(error ? { protocolError: error } : result));
    };
    try {
      runner.runInThisContext({ breakOnSigint: true });
    } catch (error) {
      delete globalThis[EVAL];
      flush();
      send({ t: 'error', ename: 'Interrupted', evalue: 'execution interrupted', traceback: ['Interrupted: ' + String(error && error.message || error)] });
      return 'interrupted';
    }
    delete globalThis[EVAL];
    const interrupted = new Promise((resolve) => { interruptCurrent = () => resolve({ interrupted: true }); });
    const response = await Promise.race([settled, interrupted]);
    interruptCurrent = null;
    try {
      if (response.interrupted) {
        flush();
        send({ t: 'error', ename: 'Interrupted', evalue: 'execution interrupted while waiting', traceback: ['Interrupted: the cell was still waiting on a promise'] });
        return 'interrupted';
      }
      if (response.protocolError) {
        flush();
        send({ t: 'error', ename: 'KernelError', evalue: String(response.protocolError), traceback: [String(response.protocolError)] });
        return 'error';
      }
      if (response.exceptionDetails) {
        await reportError(response.exceptionDetails, cellName, source);
        return 'error';
      }
      const remote = response.result;
      if (remote && remote.type !== 'undefined') {
        const value = await remoteValue(remote);
        if (value !== undefined) {
          globalThis._ = value;
          flush();
          send({ t: 'result', data: bundleOf(value) });
        }
      }
      return 'ok';
    } finally {
      await post('Runtime.releaseObjectGroup', { objectGroup: 'cell' });
    }
  }

  // ------------------------------------------------------------ frames in

  let queue = Promise.resolve();
  let pending = '';
  // A socket over the pipe (epoll), not an fs stream: a blocked thread-pool
  // read would keep process.exit() from finishing.
  if (framesStdio) {
    // A busy cell holds the event loop, and the signal that would break it stops at
    // the prefix's client: a worker thread reads the frames, raises SIGINT for an
    // `interrupt` frame (breakOnSigint stops the script), and ends the process at
    // the end of its stdin, even mid-cell. Other frames go to the loop as lines.
    const { Worker } = require('worker_threads');
    const reader = new Worker(`
      const fs = require('fs');
      const { parentPort } = require('worker_threads');
      const { StringDecoder } = require('string_decoder');
      const decoder = new StringDecoder('utf8');
      const chunk = Buffer.alloc(65536);
      let pending = '';
      for (;;) {
        let n;
        try { n = fs.readSync(3, chunk); } catch (e) { if (e.code === 'EAGAIN') continue; n = 0; }
        if (n === 0) process.kill(process.pid, 'SIGKILL');
        pending += decoder.write(chunk.subarray(0, n));
        let index;
        while ((index = pending.indexOf('\\n')) >= 0) {
          const line = pending.slice(0, index).trim();
          pending = pending.slice(index + 1);
          if (!line) continue;
          if (JSON.parse(line).t === 'interrupt') process.kill(process.pid, 'SIGINT');
          else parentPort.postMessage(line);
        }
      }`, { eval: true });
    reader.on('message', (line) => handle(JSON.parse(line)));
  } else {
    const input = new (require('net').Socket)({ fd: 3, readable: true, writable: false });
    input.setEncoding('utf8');
    input.on('data', (chunk) => {
      pending += chunk;
      let index;
      while ((index = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, index).trim();
        pending = pending.slice(index + 1);
        if (line) handle(JSON.parse(line));
      }
    });
    input.on('end', () => process.exit(0));
    input.on('error', () => process.exit(0));
  }

  function handle(frame) {
    if (frame.t === 'tool_reply') {
      const waiter = pendingTools.get(frame.id);
      if (!waiter) return;
      pendingTools.delete(frame.id);
      if (frame.ok) waiter.resolve(frame.value);
      else waiter.reject(new ToolError(frame.error || 'tool call failed'));
      return;
    }
    if (frame.t === 'exec') {
      queue = queue.then(async () => {
        let status = 'error';
        try {
          status = await execute(frame);
        } catch (error) {
          flush();
          send({ t: 'error', ename: 'KernelError', evalue: String(error), traceback: [String(error && error.stack || error)] });
        }
        flush();
        const sync = Buffer.from(String(frame.sync || ''), 'utf8');
        if (!framesStdio) {
          try { writeAll(1, sync); } catch (_) { /* fd 1 closed by the cell */ }
        }
        try { writeAll(2, sync); } catch (_) { /* fd 2 closed by the cell */ }
        send({ t: 'done', id: frame.id, status });
      });
    }
  }

  send({ t: 'ready', language: 'javascript', version: process.versions.node, executable: process.execPath, pid: process.pid });
})
