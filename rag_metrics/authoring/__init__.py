"""Writing golden sets: editing, labelling, label suggestions, drafting, judge agreement."""
