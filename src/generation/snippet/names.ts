/** Names a snippet may use without resolving them in the repository. Data only. */

const words = (s: string) => new Set(s.trim().split(/\s+/));

/** Python 3.11's `sys.stdlib_module_names` (public ones). */
export const PYTHON_STDLIB = words(`
  abc aifc argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii bisect builtins bz2
  cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys compileall concurrent
  configparser contextlib contextvars copy copyreg crypt csv ctypes curses dataclasses datetime dbm decimal
  difflib dis distutils doctest email encodings ensurepip enum errno faulthandler fcntl filecmp fileinput
  fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq
  hmac html http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3
  linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt
  multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os ossaudiodev pathlib
  pdb pickle pickletools pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd
  py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter runpy
  sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket socketserver spwd
  sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau
  symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap threading time timeit
  tkinter token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types typing unicodedata
  unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp
  zipfile zipimport zlib zoneinfo
`);

/** Python 3.11's builtins. */
export const PYTHON_BUILTINS = words(`
  ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError BrokenPipeError
  BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError
  ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError Exception
  ExceptionGroup False FileExistsError FileNotFoundError FloatingPointError FutureWarning GeneratorExit IOError
  ImportError ImportWarning IndentationError IndexError InterruptedError IsADirectoryError KeyError
  KeyboardInterrupt LookupError MemoryError ModuleNotFoundError NameError None NotADirectoryError NotImplemented
  NotImplementedError OSError OverflowError PendingDeprecationWarning PermissionError ProcessLookupError
  RecursionError ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration
  SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError True TypeError UnboundLocalError
  UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning ValueError
  Warning ZeroDivisionError abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr
  classmethod compile complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float
  format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license
  list locals map max memoryview min next object oct open ord pow print property quit range repr reversed round
  set setattr slice sorted staticmethod str sum super tuple type vars zip
`);

/** Globals of Node and of the JavaScript language. */
export const JS_GLOBALS = words(`
  Object Array String Number Boolean Symbol BigInt Math JSON Date RegExp Error TypeError RangeError SyntaxError
  ReferenceError EvalError URIError AggregateError Promise Map Set WeakMap WeakSet WeakRef Proxy Reflect Intl
  console process Buffer URL URLSearchParams globalThis require module exports __dirname __filename setTimeout
  clearTimeout setInterval clearInterval setImmediate clearImmediate queueMicrotask NaN Infinity undefined
  parseInt parseFloat isNaN isFinite encodeURIComponent decodeURIComponent encodeURI decodeURI escape unescape
  TextEncoder TextDecoder structuredClone fetch AbortController Function eval ArrayBuffer SharedArrayBuffer
  DataView Uint8Array Int8Array Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array
  BigInt64Array BigUint64Array Uint8ClampedArray Atomics arguments this
`);
