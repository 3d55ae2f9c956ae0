"""Screens of the app, one per module, each with its own stylesheet in `styles/`."""
