/** What the registry area provides the others (kernel capability "imageAccess"): who may pull or push which image. */
import type { Owner } from "../kernel/owner.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    imageAccess: ImageAccess;
  }
}

/**
 * Who may run which image. The registry area decides (an owner runs images of its own namespace and
 * public images, never another owner's namespace) and hands back pull credentials for its registry.
 * Without a registry area every image is allowed and pulled anonymously.
 */
export interface ImageAccess {
  /** throws ApiError bad_image / image_forbidden; returns credentials when the image needs them */
  pullFor(owner: Owner, image: string): Promise<{ username: string; password: string } | null>;
  /**
   * Push and pull credentials for one repository (a name under the owner's namespace) of the platform's own
   * registry, minted for the platform's builder and never shown to users; throws 503 registry_unavailable.
   * Absent: no registry to push to.
   */
  pushFor?(owner: Owner, repository: string): Promise<PushCredentials>;
}

export interface PushCredentials {
  /** 127.0.0.1:<port> of the registry */
  registry: string;
  namespace: string;
  username: string;
  password: string;
  /** when the credentials stop working */
  expires_at?: Date;
}
