"""Reports over run directories."""
