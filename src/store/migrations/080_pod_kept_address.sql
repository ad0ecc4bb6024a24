-- Scale-to-zero (issue 30): the published address (127.0.0.1:<port>) of the container an idle stop keeps, read
-- while it still ran. podman assigns a published host port when it creates the container, so `podman start`
-- brings it back on the same one: a wake routes to it without inspecting the container first (src/apps/README.md).
-- Null when unknown; used only by a wake of the same generation's container, which must start by name first.
ALTER TABLE pods ADD COLUMN kept_address text;
