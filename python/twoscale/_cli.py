"""Running the twoscale executable: flags from keyword arguments, JSON back, errors raised."""

import collections
import json
import numbers
import os
import shutil
import subprocess
import sys
import threading

__all__ = ["TwoscaleError", "find_binary", "build_argv", "run", "ed", "fisher", "bound"]

#: How many trailing stderr lines an error keeps.
STDERR_TAIL_LINES = 40


class TwoscaleError(RuntimeError):
    """twoscale exited with a non-zero status (or printed no JSON).

    ``str(e)`` is twoscale's one-line message; ``returncode``, ``stderr`` (the last lines of its
    stderr) and ``cmd`` (the argv list) carry the rest.
    """

    def __init__(self, message, returncode, stderr, cmd):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.stderr = stderr
        self.cmd = list(cmd)

    @property
    def command_line(self):
        """The command line as one shell-quoted string."""
        import shlex
        return " ".join(shlex.quote(a) for a in self.cmd)


def find_binary(binary=None):
    """The twoscale executable: ``binary``, else $TWOSCALE_BIN, else ``twoscale`` on PATH."""
    hint = ("pass binary='/path/to/twoscale', set TWOSCALE_BIN=/path/to/twoscale, "
            "or put twoscale on PATH (built with `swift build`: .build/debug/twoscale)")
    if binary is not None:
        source, candidate = "binary=", os.fspath(binary)
    elif os.environ.get("TWOSCALE_BIN"):
        source, candidate = "TWOSCALE_BIN", os.environ["TWOSCALE_BIN"]
    else:
        found = shutil.which("twoscale")
        if found is None:
            raise FileNotFoundError("twoscale executable not found: " + hint)
        return found
    if os.sep in candidate or (os.altsep and os.altsep in candidate):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    else:
        found = shutil.which(candidate)
        if found is not None:
            return found
    raise FileNotFoundError("twoscale executable not found at %r (from %s): %s" % (candidate, source, hint))


def _value(name, v):
    if isinstance(v, bool):
        raise TypeError("flag %s: a boolean inside a list is not a value" % name)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))
    if isinstance(v, (str, os.PathLike)):
        return os.fspath(v)
    raise TypeError("flag %s: cannot write %r (%s) as a command-line value" % (name, v, type(v).__name__))


def build_argv(command, *args, **flags):
    """argv (without the executable) for ``twoscale COMMAND ARGS... --flag value ...``.

    ``samples=50`` gives ``--samples 50``, ``noise_samples=3`` ``--noise-samples 3``, True the bare flag,
    False/None nothing, a list or tuple its items joined by commas; numbers are written with repr
    (so they round-trip); a value starting with ``-`` is written ``--flag=value``.
    """
    argv = [command] + [_value("positional", a) for a in args]
    for key, v in flags.items():
        flag = "--" + key.replace("_", "-")
        if v is None or v is False:
            continue
        if v is True:
            argv.append(flag)
            continue
        if isinstance(v, (list, tuple)):
            text = ",".join(_value(flag, x) for x in v)
        else:
            text = _value(flag, v)
        if text.startswith("-"):
            argv.append(flag + "=" + text)
        else:
            argv += [flag, text]
    return argv


def _message(lines, returncode):
    for line in reversed(lines):
        if line.startswith("twoscale:"):
            return line.strip()
    for line in reversed(lines):
        if line.strip():
            return line.strip()
    return "twoscale exited with status %d" % returncode


def run(command, *args, binary=None, quiet=False, **flags):
    """Runs ``twoscale COMMAND ARGS... FLAGS... --json`` and returns the parsed JSON object.

    stderr (progress, warnings, notes) is echoed to ``sys.stderr`` as it comes unless ``quiet=True``;
    its last lines are kept either way and attached to a :class:`TwoscaleError`.
    """
    flags.pop("json", None)
    exe = find_binary(binary)
    cmd = [exe] + build_argv(command, *args, **flags) + ["--json"]
    tail = collections.deque(maxlen=STDERR_TAIL_LINES)

    def pump(stream):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            tail.append(line.rstrip("\r\n"))
            if not quiet:
                try:
                    sys.stderr.write(line)
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
        stream.close()

    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader = threading.Thread(target=pump, args=(proc.stderr,), daemon=True)
    reader.start()
    try:
        out = proc.stdout.read()
        proc.stdout.close()
        returncode = proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        reader.join()
    lines = list(tail)
    stderr = "\n".join(lines)
    if returncode != 0:
        raise TwoscaleError(_message(lines, returncode), returncode, stderr, cmd)
    try:
        return json.loads(out.decode("utf-8"))
    except ValueError as e:
        raise TwoscaleError("twoscale %s printed no JSON object on stdout (%s)" % (command, e),
                            returncode, stderr, cmd) from None


def ed(*, binary=None, quiet=False, **flags):
    """``twoscale ed ... --json``: the 2sED (and lower 2sED) of a network, as a dict."""
    return run("ed", binary=binary, quiet=quiet, **flags)


def fisher(*, binary=None, quiet=False, **flags):
    """``twoscale fisher ... --json``: the Fisher spectrum at one parameter point, as a dict."""
    return run("fisher", binary=binary, quiet=quiet, **flags)


def bound(*, binary=None, quiet=False, **flags):
    """``twoscale bound ... --json``: the generalisation bound against n, as a dict."""
    return run("bound", binary=binary, quiet=quiet, **flags)
