"""pytest as `make test` runs it, leaving out only the interpreter's own teardown at the end.

Once a pass of the suite has reported, Python's exit waits for the threads and runs every atexit
callback (logging's flush, multiprocessing's cleanup), then frees the whole heap module by module:
the models, tokenizers, matplotlib and Playwright a pass has loaded, about 5 s of CPU per pass
on these machines, with nothing left to write. This callback is registered before anything is
imported, so it runs after every other one, and ends the process there with pytest's status.
"""

import atexit
import os
import sys

_status: list[int] = []


def _exit_without_teardown() -> None:
    if not _status:
        # pytest did not return (an error before it ran): Python's ordinary exit.
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass  # a reader that went away (`| head`): the status still counts
    os._exit(_status[0])


atexit.register(_exit_without_teardown)

import pytest  # noqa: E402  (after the callback: see above)

if __name__ == "__main__":
    try:
        _status.append(int(pytest.main()))
    except BrokenPipeError:
        _status.append(1)  # the reader went away, as the pytest command answers it
    sys.exit(_status[0])
