"""LLM-as-a-judge: published protocols as files, any backend, honest about failures.

Importing this package registers ``judge:<protocol>`` metric families (it needs
``pyyaml``; no model library is imported until a judge runs).
"""

from dialeval.judges.metric import JudgeConfig, JudgeMetric, register_judges
from dialeval.judges.protocol import Protocol, load_protocol, protocol_names

__all__ = ["JudgeConfig", "JudgeMetric", "Protocol", "load_protocol", "protocol_names", "register_judges"]

register_judges()
