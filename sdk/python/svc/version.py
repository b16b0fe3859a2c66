"""The SDK's version, `svc.__version__`: a module of its own, so that the
modules needing it (the MCP client's name for itself, `svc version`) do not
import the package's facade."""

__version__ = "0.3.2"
