"""The injected JS (plain ES2022 files), shipped as package data; see CHANNEL.md."""
