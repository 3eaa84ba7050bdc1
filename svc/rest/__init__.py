"""The REST front end (layer 7): paths and parameters into plans, responses shaped from the database's JSON, and the
OpenAPI document built from the model. Never imports the GraphQL front end: shared planning lives in `svc/plan`."""

from ._endpoint import RestEndpoint
from ._messages import RestRequest, RestResponse
from ._openapi import build_openapi, openapi_json, openapi_yaml, read_openapi
from ._openapi_diff import diff_openapi
from ._resources import FunctionRoute, Kind, Resource, RestIndex, Target

__all__ = [
    "FunctionRoute",
    "Kind",
    "Resource",
    "RestEndpoint",
    "RestIndex",
    "RestRequest",
    "RestResponse",
    "Target",
    "build_openapi",
    "diff_openapi",
    "openapi_json",
    "openapi_yaml",
    "read_openapi",
]
