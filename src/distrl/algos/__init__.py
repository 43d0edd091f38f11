"""Learning rules: losses, targets and priorities as pure functions of tensors."""
