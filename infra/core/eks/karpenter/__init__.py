"""Karpenter on EKS: the controller (``controller``) and the names both it and the node pools use
(``names``). Pure code."""
