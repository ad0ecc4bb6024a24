/**
 * Volumes as the runtime sees them: a directory of fixed size on the pod's host, mounted into containers.
 * The local store (runtime helper) backs each with a loop-mounted ext4 file, so a full volume refuses
 * writes instead of growing. Placeholder contract until the local implementation lands.
 */
export interface VolumeStore {
  create(id: string, sizeMb: number): Promise<string>;
  /** the host directory of the volume, mounting it first when needed (after a host reboot) */
  ensureMounted(id: string): Promise<string>;
  remove(id: string): Promise<void>;
  usage(id: string): Promise<{ usedBytes: number; sizeBytes: number } | null>;
}
