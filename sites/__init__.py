"""The bundled demo sites; see README.md."""
