"""Video for the model: still frames sampled from a workspace video file.

The decoding (PyAV, which bundles FFmpeg's libraries) runs in a worker process inside the run's
sandbox (`worker.py`), never in the harness: a video is untrusted input to a large C decoder, so
it is decoded where a crash, a runaway allocation or a hang is capped and contained like any
command. `tools/video.py` reads the file through the read policy and starts the worker; this
package is what the worker runs.

PyAV is the optional extra `ioh-tui[video]`; without it `view_image` says which extra to install.
"""

EXTRA = "ioh-tui[video]"
MAX_FRAMES = 10
"""Stills one call may ask for (each costs the model about an image's tokens)."""
DEFAULT_FRAMES = 4
"""Stills sampled when the call names neither a count nor times."""
