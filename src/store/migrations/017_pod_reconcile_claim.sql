-- Which process reconciles a pod now. A claim held by a live process (its lease lock, src/hosts) keeps other
-- processes of the host off the pod; a dead holder's claim is taken at once; none holds a connection meanwhile.
ALTER TABLE pods ADD COLUMN reconcile_process uuid, ADD COLUMN reconcile_until timestamptz;
