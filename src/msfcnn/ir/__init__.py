"""Graph IR shared by frontends, cost models, executor and code generator."""

from .elements import ELEMENT_TYPES, ElementType
from .graph import NETWORK_INPUT, Graph, Node, Quant, check_numerics, with_numerics

__all__ = ["ELEMENT_TYPES", "ElementType", "NETWORK_INPUT", "Graph", "Node", "Quant", "check_numerics", "with_numerics"]
