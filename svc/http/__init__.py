"""The HTTP edge (layer 10): the ASGI app, its routes, probes, the UI pages, and the rendering of typed errors."""

from ._app import App
from ._debug import DebugHeaders, DebugStatements
from ._graphql import GraphqlRoutes
from ._imports import ImportRoutes
from ._live import Live
from ._messages import Request, Response
from ._metrics import MetricsRoutes
from ._openapi import OpenapiRoutes
from ._probes import Probes
from ._problem import PROBLEM_JSON, problem
from ._rest import RestRoutes
from ._routing import Route
from ._socket import GraphqlSocket
from ._ui import UiRoutes

__all__ = [
    "PROBLEM_JSON",
    "App",
    "DebugHeaders",
    "DebugStatements",
    "GraphqlRoutes",
    "GraphqlSocket",
    "ImportRoutes",
    "Live",
    "MetricsRoutes",
    "OpenapiRoutes",
    "Probes",
    "Request",
    "Response",
    "RestRoutes",
    "Route",
    "UiRoutes",
    "problem",
]
