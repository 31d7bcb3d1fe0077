# The Python kernel driver, shipped inside the `kernel` crate.
#
# The host starts the project's interpreter with a one-line bootstrap that
# reads this source as the first frame on fd 3 and executes it. From then on
# frames (one JSON object per line) arrive on fd 3 and leave on fd 4; the
# program's own fd 0 is /dev/null and fds 1 and 2 are captured into pipes this
# driver reads, so nothing the cell prints, nor any child process, can reach
# the protocol.

import ast
import base64
import builtins
import codecs
import importlib
import importlib.abc
import importlib.util
import io
import json
import linecache
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
import tokenize
import traceback
import types

_IN = _kernel_in  # noqa: F821 - set by the bootstrap: a buffered reader on fd 3
# Through a command prefix (`docker exec -i`), the frames travel on the
# process's stdin and stdout, which a shell moved to fds 3 and 4; signals sent
# to the host's process group reach only the prefix's client, so an interrupt
# comes as a frame, and the end of the frames ends the kernel even mid-cell.
_FRAMES_STDIO = os.environ.pop("AGENT_TOOLS_KERNEL_FRAMES", "") == "stdio"
_OUT_FD = 4
_SEND_LOCK = threading.Lock()
# A child the cell forked that runs back into the driver (an exception in the
# child, an interrupt before it set its handlers) is not the kernel: it must
# neither speak for it nor read its frames, so it exits there.
_KERNEL_PID = os.getpid()


def _not_the_kernel():
    if os.getpid() != _KERNEL_PID:
        os._exit(1)


def _send(frame):
    _not_the_kernel()
    # The newline before the frame ends any line a cell wrote to the frame pipe
    # itself, so the host skips that line and still reads this frame.
    data = ("\n" + json.dumps(frame, ensure_ascii=False) + "\n").encode("utf-8", "replace")
    with _SEND_LOCK:
        view = memoryview(data)
        while view:
            written = os.write(_OUT_FD, view)
            view = view[written:]


def _read_frames(frames):
    """Stdio mode: reads every frame, acts on `interrupt` and on the end at once."""
    while True:
        line = _IN.readline()
        if not line:
            os._exit(0)
        line = line.strip()
        if not line:
            continue
        frame = json.loads(line)
        if frame.get("t") == "interrupt":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            frames.put(frame)


if _FRAMES_STDIO:
    import queue

    _FRAMES = queue.SimpleQueue()
    threading.Thread(target=_read_frames, args=(_FRAMES,), daemon=True, name="kernel-frames").start()


def _recv():
    while _FRAMES_STDIO:
        try:
            return _FRAMES.get()
        except KeyboardInterrupt:
            continue
    while True:
        try:
            line = _IN.readline()
        except KeyboardInterrupt:
            continue
        if not line:
            os._exit(0)
        line = line.strip()
        if line:
            return json.loads(line)


# ---------------------------------------------------------------- output


# Characters of stream text per frame: at most 1.5 MiB of JSON, every character escaped.
_STREAM_PIECE = 1 << 18


class _Output:
    """Coalesces stream text so that many small writes become few frames."""

    def __init__(self):
        self.lock = threading.RLock()
        self.name = None
        self.parts = []
        self.size = 0
        self.captures = []
        self.last_send = 0.0

    def write(self, name, text):
        if not text:
            return
        with self.lock:
            for capture in self.captures:
                capture.drain()
            self._append(name, text)

    def _append(self, name, text):
        if self.name is not None and self.name != name:
            self._flush_locked()
        self.name = name
        self.parts.append(text)
        self.size += len(text)
        # Send at once unless writes come in a burst, so that output before a
        # crash is not lost, while a tight print loop still makes few frames.
        if self.size >= 16384 or time.monotonic() - self.last_send >= 0.002:
            self._flush_locked()

    def flush(self):
        with self.lock:
            for capture in self.captures:
                capture.drain()
            self._flush_locked()

    def _flush_locked(self):
        if self.parts:
            text = "".join(self.parts)
            # In pieces, so that no frame nears the host's frame limit (16 MiB).
            for start in range(0, len(text), _STREAM_PIECE):
                _send({"t": "stream", "name": self.name, "text": text[start:start + _STREAM_PIECE]})
            self.last_send = time.monotonic()
        self.name = None
        self.parts = []
        self.size = 0


_OUTPUT = _Output()


class _FdCapture:
    """Points fd 1 or 2 at a pipe and forwards what arrives as stream text."""

    def __init__(self, fd, name):
        self.name = name
        read_end, write_end = os.pipe()
        os.dup2(write_end, fd)
        os.close(write_end)
        os.set_blocking(read_end, False)
        self.fd = read_end
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def drain(self):
        # Called with the output lock held.
        chunks = []
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except (BlockingIOError, InterruptedError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        if chunks:
            text = self.decoder.decode(b"".join(chunks))
            if text:
                _OUTPUT._append(self.name, text)


def _pump(captures):
    fds = [capture.fd for capture in captures]
    while True:
        try:
            ready, _, _ = select.select(fds, [], [], 0.1)
        except InterruptedError:
            continue
        with _OUTPUT.lock:
            if ready:
                for capture in captures:
                    capture.drain()
            _OUTPUT._flush_locked()


class _Stream(io.TextIOBase):
    def __init__(self, name, fd):
        self._name = name
        self._fd = fd

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "replace"

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        _OUTPUT.write(self._name, text)
        return len(text)

    def flush(self):
        pass


class _NoStdin(io.TextIOBase):
    def readable(self):
        return True

    def fileno(self):
        return 0

    def read(self, size=-1):
        return ""

    def readline(self, size=-1):
        return ""


class StdinNotAvailable(EOFError):
    pass


def _no_input(prompt=""):
    raise StdinNotAvailable(
        "input() is not available: the kernel has no stdin; put the value in the code instead"
    )


# ---------------------------------------------------------------- display


_REPR_METHODS = [
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_latex_", "text/latex"),
    ("_repr_json_", "application/json"),
]


def _is_figure(obj):
    cls = type(obj)
    return cls.__name__ in ("Figure", "SubFigure") and cls.__module__.startswith("matplotlib")


def _figure_png(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _plain(obj):
    if isinstance(obj, (dict, list, tuple, set, frozenset)):
        import pprint

        return pprint.pformat(obj)
    return repr(obj)


def _bundle(obj):
    data = {}
    if _is_figure(obj):
        data["image/png"] = _figure_png(obj)
        data["text/plain"] = repr(obj)
        return data
    cls = type(obj)
    mimebundle = getattr(cls, "_repr_mimebundle_", None)
    if callable(mimebundle) and not isinstance(obj, type):
        try:
            got = mimebundle(obj)
            if isinstance(got, tuple):
                got = got[0]
            if isinstance(got, dict):
                for mime, value in got.items():
                    data[mime] = value
        except Exception:
            pass
    if not isinstance(obj, type):
        for method, mime in _REPR_METHODS:
            if mime in data:
                continue
            fn = getattr(cls, method, None)
            if not callable(fn):
                continue
            try:
                value = fn(obj)
            except Exception:
                continue
            if isinstance(value, tuple):
                value = value[0]
            if value is None:
                continue
            data[mime] = value
    for mime in ("image/png", "image/jpeg"):
        value = data.get(mime)
        if isinstance(value, (bytes, bytearray)):
            data[mime] = base64.b64encode(bytes(value)).decode("ascii")
    if "application/json" in data and not isinstance(data["application/json"], str):
        try:
            data["application/json"] = json.dumps(data["application/json"])
        except Exception:
            del data["application/json"]
    for mime in list(data):
        if not isinstance(data[mime], str):
            data[mime] = str(data[mime])
    data["text/plain"] = _plain(obj)
    return data


def display(*objs, raw=False, **_ignored):
    """Show each value as rich output (a MIME bundle), in order."""
    for obj in objs:
        if raw and isinstance(obj, dict):
            bundle = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in obj.items()}
        else:
            bundle = _bundle(obj)
        _OUTPUT.flush()
        _send({"t": "display", "data": bundle})


def _show_open_figures():
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    try:
        numbers = list(pyplot.get_fignums())
    except Exception:
        return
    for number in numbers:
        try:
            display(pyplot.figure(number))
        except Exception as error:
            _OUTPUT.write("stderr", "could not render figure %s: %s\n" % (number, error))
    try:
        pyplot.close("all")
    except Exception:
        pass


_BACKEND_SOURCE = """
from matplotlib.backend_bases import FigureManagerBase as FigureManager
from matplotlib.backends.backend_agg import FigureCanvasAgg as FigureCanvas
import builtins as _builtins

def show(*args, **kwargs):
    _builtins.__kernel__.show_figures()

def draw_if_interactive(*args, **kwargs):
    pass
"""


class _BackendLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(compile(_BACKEND_SOURCE, "<kernel matplotlib backend>", "exec"), module.__dict__)


class _MatplotlibHook(importlib.abc.MetaPathFinder):
    """Serves the inline backend module and points matplotlib at it once imported."""

    busy = False

    def find_spec(self, name, path=None, target=None):
        if name == "_kernel_inline":
            return importlib.util.spec_from_loader(name, _BackendLoader())
        if name != "matplotlib" or self.busy:
            return None
        self.busy = True
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                creator = getattr(spec_loader, "create_module", None)
                return creator(spec) if creator else None

            def exec_module(self, module):
                original(module)
                try:
                    module.rcParams["backend"] = "module://_kernel_inline"
                except Exception:
                    pass

        spec_loader = spec.loader
        spec.loader = _Loader()
        return spec


# ---------------------------------------------------------------- magics


def _system(command):
    _OUTPUT.flush()
    completed = subprocess.run(command, shell=True, stdin=subprocess.DEVNULL)
    _OUTPUT.flush()
    return completed.returncode


def _system_capture(command):
    completed = subprocess.run(
        command, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
    )
    return completed.stdout.decode("utf-8", "replace").splitlines()


def _dist_snapshot():
    from importlib import metadata

    found = {}
    for dist in metadata.distributions():
        try:
            name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        except Exception:
            continue
        if not name:
            continue
        tops = set()
        try:
            text = dist.read_text("top_level.txt")
            if text:
                tops.update(line.strip() for line in text.splitlines() if line.strip())
            else:
                for file in dist.files or []:
                    first = file.parts[0] if file.parts else ""
                    if not first or first.endswith((".dist-info", ".egg-info", ".data")) or first == "..":
                        continue
                    if first.endswith(".pth"):
                        continue
                    tops.add(first.split(".")[0])
        except Exception:
            pass
        found[name] = (dist.version, tops)
    return found


def _evict(names):
    evicted = []
    for module_name in list(sys.modules):
        top = module_name.split(".")[0]
        if top in names and not top.startswith("_kernel"):
            del sys.modules[module_name]
            evicted.append(module_name)
    return evicted


def _pip(line):
    try:
        before = _dist_snapshot()
    except Exception:
        before = {}
    _OUTPUT.flush()
    code = subprocess.call([sys.executable, "-m", "pip"] + shlex.split(line), stdin=subprocess.DEVNULL)
    _OUTPUT.flush()
    importlib.invalidate_caches()
    sys.path_importer_cache.clear()
    try:
        import site

        for directory in site.getsitepackages() + [site.getusersitepackages()]:
            if os.path.isdir(directory):
                site.addsitedir(directory)
    except Exception:
        pass
    try:
        after = _dist_snapshot()
    except Exception:
        after = {}
    touched = set()
    for name in set(before) | set(after):
        if before.get(name, (None,))[0] != after.get(name, (None,))[0]:
            touched |= before.get(name, (None, set()))[1]
            touched |= after.get(name, (None, set()))[1]
    evicted = _evict(touched)
    if evicted:
        print("Note: evicted %d module(s) so the next import sees the new install: %s"
              % (len(evicted), ", ".join(sorted(m for m in evicted if "." not in m)[:20])))
    if code != 0:
        print("pip exited with status %d" % code, file=sys.stderr)
    return None


def _cd(line):
    target = line.strip()
    if target.startswith("-b "):
        target = target[3:].strip()
    if (target.startswith('"') and target.endswith('"')) or (target.startswith("'") and target.endswith("'")):
        target = target[1:-1]
    target = os.path.expanduser(os.path.expandvars(target or "~"))
    os.chdir(target)
    print(os.getcwd())


def _timeit_parse(line):
    words = shlex.split(line)
    number = None
    repeat = 7
    rest = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "-n" and index + 1 < len(words):
            number = int(words[index + 1])
            index += 2
        elif word == "-r" and index + 1 < len(words):
            repeat = int(words[index + 1])
            index += 2
        elif word in ("-q", "-o", "-c", "-p") or (word.startswith("-") and word[1:].isalpha() and not rest):
            index += 1
        else:
            rest = words[index:]
            break
    return number, repeat, " ".join(rest)


def _format_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return "%.3g %s" % (seconds / scale, unit)
    return "%.3g ns" % (seconds / 1e-9)


def _timeit(stmt, setup, number, repeat):
    import statistics
    import timeit

    timer = timeit.Timer(stmt, setup or "pass", globals=_USER_NS)
    if number is None:
        number, _ = timer.autorange()
    runs = [t / number for t in timer.repeat(repeat=repeat, number=number)]
    mean = statistics.mean(runs)
    dev = statistics.pstdev(runs) if len(runs) > 1 else 0.0
    print("%s ± %s per loop (mean ± std. dev. of %d run%s, %d loop%s each)" % (
        _format_time(mean), _format_time(dev), repeat, "" if repeat == 1 else "s",
        number, "" if number == 1 else "s"))


def _time(stmt):
    wall = time.perf_counter()
    cpu = time.process_time()
    result = None
    try:
        tree = ast.parse(stmt, mode="exec")
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            head = ast.Module(body=tree.body[:-1], type_ignores=[])
            exec(compile(head, "<timed>", "exec"), _USER_NS)
            result = eval(compile(ast.Expression(tree.body[-1].value), "<timed>", "eval"), _USER_NS)
        else:
            exec(compile(tree, "<timed>", "exec"), _USER_NS)
    finally:
        print("CPU times: total: %s\nWall time: %s" % (
            _format_time(time.process_time() - cpu), _format_time(time.perf_counter() - wall)))
    return result


def _line_magic(name, line):
    if name == "pip" or name == "conda":
        return _pip(line)
    if name == "cd":
        return _cd(line)
    if name == "pwd":
        return os.getcwd()
    if name == "env":
        words = line.strip()
        if not words:
            return dict(os.environ)
        if "=" in words:
            key, value = words.split("=", 1)
            os.environ[key.strip()] = value.strip()
            return None
        if " " in words:
            key, value = words.split(None, 1)
            os.environ[key] = value
            return None
        return os.environ.get(words)
    if name == "matplotlib":
        return None
    if name == "timeit":
        number, repeat, stmt = _timeit_parse(line)
        return _timeit(stmt, "", number, repeat)
    if name == "time":
        return _time(line)
    if name in ("load_ext", "autoreload", "config"):
        return None
    if name == "who":
        print("  ".join(sorted(k for k in _USER_NS if not k.startswith("_"))))
        return None
    raise NameError("unsupported magic %%%s (supported: %%pip, %%cd, %%pwd, %%env, %%time, %%timeit, %%matplotlib)" % name)


def _cell_magic(name, line, body):
    if name in ("bash", "sh", "zsh"):
        _OUTPUT.flush()
        subprocess.run([name, "-c", body], stdin=subprocess.DEVNULL)
        _OUTPUT.flush()
        return None
    if name == "script":
        shell = line.split()[0] if line.split() else "sh"
        _OUTPUT.flush()
        subprocess.run([shell, "-c", body], stdin=subprocess.DEVNULL)
        _OUTPUT.flush()
        return None
    if name == "timeit":
        number, repeat, setup = _timeit_parse(line)
        return _timeit(body, setup, number, repeat)
    if name == "time":
        return _time(body)
    if name == "capture":
        exec(compile(body, "<capture>", "exec"), _USER_NS)
        return None
    if name in ("writefile", "file"):
        words = shlex.split(line)
        append = "-a" in words
        path = [w for w in words if not w.startswith("-")][0]
        with open(path, "a" if append else "w", encoding="utf-8") as handle:
            handle.write(body)
        print(("Appending to %s" if append else "Writing %s") % path)
        return None
    if name in ("html", "HTML"):
        display({"text/html": body, "text/plain": body}, raw=True)
        return None
    if name == "markdown":
        display({"text/markdown": body, "text/plain": body}, raw=True)
        return None
    raise NameError("unsupported cell magic %%%%%s (supported: %%%%bash, %%%%sh, %%%%script, %%%%timeit, %%%%time, %%%%writefile, %%%%html, %%%%markdown)" % name)


# ---------------------------------------------------------------- tool bridge


class ToolError(Exception):
    """A tool called from the cell failed or was refused."""


_TOOL_IDS = [0]


def tool(name, args=None, **kwargs):
    """Call one of the host's tools: tool("read", {"path": "a.txt"}); returns its result."""
    if args is None:
        args = {}
    if kwargs:
        args = dict(args, **kwargs)
    _TOOL_IDS[0] += 1
    call_id = _TOOL_IDS[0]
    _OUTPUT.flush()
    _send({"t": "tool", "id": call_id, "name": str(name), "args": args})
    while True:
        frame = _recv()
        if frame.get("t") == "tool_reply" and frame.get("id") == call_id:
            break
    if frame.get("ok"):
        return frame.get("value")
    raise ToolError(frame.get("error") or "tool call failed")


# ---------------------------------------------------------------- execution


class _Kernel:
    pass


_USER_MODULE = types.ModuleType("__main__")
_USER_MODULE.__dict__["__builtins__"] = builtins
_USER_NS = _USER_MODULE.__dict__
_LOOP = [None]
_CO_COROUTINE = 0x0080


def _trailing_semicolon(code):
    last = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT,
                              tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
                continue
            last = token
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def _run_code(code_obj):
    if code_obj.co_flags & _CO_COROUTINE:
        import asyncio

        if _LOOP[0] is None or _LOOP[0].is_closed():
            _LOOP[0] = asyncio.new_event_loop()
        return _LOOP[0].run_until_complete(eval(code_obj, _USER_NS))
    return eval(code_obj, _USER_NS)


def _report_error(error):
    frames = [
        frame for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename != "<kernel>"
    ]
    lines = []
    if frames:
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_list(frames))
    lines.extend(traceback.format_exception_only(type(error), error))
    _OUTPUT.flush()
    _send({
        "t": "error",
        "ename": type(error).__name__,
        "evalue": str(error),
        "traceback": [line.rstrip("\n") for line in lines],
    })


def _execute(count, code):
    filename = "<cell %d>" % count
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    try:
        tree = compile(code, filename, "exec", ast.PyCF_ONLY_AST | flags, dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        error.__traceback__ = None
        _report_error(error)
        return "error"
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not _trailing_semicolon(code):
        last = tree.body.pop()
    try:
        if tree.body:
            _run_code(compile(tree, filename, "exec", flags, dont_inherit=True))
        if last is not None:
            value = _run_code(compile(ast.Expression(last.value), filename, "eval", flags, dont_inherit=True))
            if value is not None:
                builtins._ = value
                _USER_NS["_"] = value
                bundle = _bundle(value)
                _OUTPUT.flush()
                _send({"t": "result", "data": bundle})
        _show_open_figures()
        return "ok"
    except KeyboardInterrupt as error:
        _report_error(error)
        return "interrupted"
    except BaseException as error:  # SystemExit too: the kernel survives a cell's exit()
        _report_error(error)
        try:
            _show_open_figures()
        except BaseException:
            pass
        return "error"


def _write_raw(fd, text):
    data = text.encode("utf-8")
    while data:
        try:
            written = os.write(fd, data)
        except OSError:
            return
        data = data[written:]


def _main():
    raw_out = os.dup(1)
    raw_err = os.dup(2)
    try:
        import faulthandler

        faulthandler.enable(file=os.fdopen(os.dup(raw_err), "w"), all_threads=False)
    except Exception:
        pass
    captures = [_FdCapture(1, "stdout"), _FdCapture(2, "stderr")]
    _OUTPUT.captures = captures
    threading.Thread(target=_pump, args=(captures,), daemon=True, name="kernel-output").start()
    sys.stdout = sys.__stdout__ = _Stream("stdout", 1)
    sys.stderr = sys.__stderr__ = _Stream("stderr", 2)
    sys.stdin = sys.__stdin__ = _NoStdin()
    sys.displayhook = lambda value: None if value is None else display(value)
    sys.modules["__main__"] = _USER_MODULE
    sys.meta_path.insert(0, _MatplotlibHook())
    kernel = _Kernel()
    kernel.pip = _pip
    kernel.cd = _cd
    kernel.system = _system
    kernel.system_capture = _system_capture
    kernel.line_magic = _line_magic
    kernel.cell_magic = _cell_magic
    kernel.show_figures = _show_open_figures
    builtins.__kernel__ = kernel
    builtins.display = display
    builtins.tool = tool
    builtins.ToolError = ToolError
    builtins.input = _no_input
    try:
        import getpass

        getpass.getpass = _no_input
    except Exception:
        pass
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        import warnings

        warnings.filterwarnings("ignore", message=".*non-interactive.*cannot be shown")
    except Exception:
        pass
    _send({
        "t": "ready",
        "language": "python",
        "version": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "pid": os.getpid(),
    })
    while True:
        frame = _recv()
        if frame.get("t") != "exec":
            continue
        status = "error"
        _OUTPUT.last_send = 0.0
        try:
            status = _execute(frame.get("count", 0), frame.get("code", ""))
        except KeyboardInterrupt:
            status = "interrupted"
        _not_the_kernel()
        while True:
            try:
                _OUTPUT.flush()
                sys.stdout.flush()
                break
            except KeyboardInterrupt:
                status = "interrupted"
        sync = frame.get("sync", "")
        if not _FRAMES_STDIO:  # there, fd 1 is fd 2
            _write_raw(raw_out, sync)
        _write_raw(raw_err, sync)
        _send({"t": "done", "id": frame.get("id"), "status": status})


_main()
