/**
 * Volumes: fixed-size filesystems containers mount. The contract areas code against; the local
 * implementation (volumes-local.ts) keeps each volume as a loop-mounted ext4 image under DATA_DIR, so a
 * full volume refuses writes (ENOSPC) instead of growing into the host's disk. A Kubernetes provider maps
 * a volume onto a PersistentVolumeClaim (README.md). `createVolumeStore` (index.ts) gives this host's store.
 */
export interface VolumeUsage {
  usedBytes: number;
  sizeBytes: number;
}

export interface VolumeStore {
  /** null when volumes can be made here; otherwise what is missing and how to install it */
  unavailable(): Promise<string | null>;
  /** creates the volume (or finds the one with that id) and mounts it; returns the host path containers mount */
  create(id: string, sizeMb: number): Promise<{ path: string }>;
  /** mounts an existing volume again (after a host reboot); a RuntimeError when there is no such volume */
  ensureMounted(id: string): Promise<{ path: string }>;
  /** unmounts and deletes it with its data; a volume that is gone already is fine */
  remove(id: string): Promise<void>;
  /** bytes used and the filesystem's size; null when the volume does not exist */
  usage(id: string): Promise<VolumeUsage | null>;
  /** the host directory the volume is mounted at (what ContainerSpec.mounts names) */
  path(id: string): string;
}
