"""Existing: any cluster reached through a kubeconfig context; Batchplane installs only what the stack asks for."""
