"""Training jobs of `prefrag train`: switcher DPO, SPO planner SFT+DPO, evidence filter, MoG."""
