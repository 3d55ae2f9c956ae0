"""Test doubles for the model: a scripted provider and a loopback server on the real wires.

They ship in the wheel because the demo and `ioh-tui serve-fake` use them at run time; the name
says what they are. `scenario` reads a scenario file (interface §4), `scripted` plays it in
process, `fake_server` plays it over the OpenAI or Anthropic streaming wire (`fake_wire` writes
the frames, `fake_http` speaks just enough HTTP/1.1).
"""
