"""Graph IR shared by frontends, cost models, executor and code generator."""

from .graph import NETWORK_INPUT, Graph, Node

__all__ = ["NETWORK_INPUT", "Graph", "Node"]
