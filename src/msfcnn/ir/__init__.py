"""Graph IR shared by frontends, cost models, executor and code generator."""

from .graph import NETWORK_INPUT, Graph, Node, Quant

__all__ = ["NETWORK_INPUT", "Graph", "Node", "Quant"]
