"""Helpers for testing structbench and dry-running harness set-ups without a real model."""
