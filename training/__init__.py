"""Training: switcher DPO, SPO planner SFT+DPO, MoG router."""
