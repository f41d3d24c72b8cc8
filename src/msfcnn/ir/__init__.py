"""Graph IR shared by frontends, cost models, executor and code generator."""

from .elements import ELEMENT_TYPES, ElementType
from .graph import (NETWORK_INPUT, Graph, GraphInput, Node, Quant, StateBuffer, check_numerics, input_tensor,
                    is_network_input, with_numerics)

__all__ = ["ELEMENT_TYPES", "ElementType", "NETWORK_INPUT", "Graph", "GraphInput", "Node", "Quant", "StateBuffer", "check_numerics",
           "input_tensor", "is_network_input", "with_numerics"]
