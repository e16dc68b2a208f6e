"""Programs that join a benchmark's own tools to the runner's services (a model pool with the response cache):
they sit above both, as a benchmark never imports the runner."""
