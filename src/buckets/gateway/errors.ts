/**
 * S3 errors: the code names the HTTP status, as S3 answers them, rendered as the S3 XML error document
 * (xml.ts). The gateway never answers the platform API's JSON errors.
 */
const STATUS = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  BucketAlreadyOwnedByYou: 409,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  IncompleteBody: 400,
  InternalError: 500,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidDigest: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  KeyTooLongError: 400,
  MalformedXML: 400,
  MetadataTooLarge: 400,
  MethodNotAllowed: 405,
  MissingContentLength: 411,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NotImplemented: 501,
  NotModified: 304,
  PreconditionFailed: 412,
  RequestTimeTooSkewed: 403,
  ServiceUnavailable: 503,
  SignatureDoesNotMatch: 403,
  XAmzContentSHA256Mismatch: 400,
} as const;

export type S3ErrorCode = keyof typeof STATUS;

export class S3Error extends Error {
  readonly status: number;
  constructor(
    readonly code: S3ErrorCode,
    message: string,
    /** extra elements of the error document (BucketName, Key, ...) */
    readonly detail: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS[code];
  }
}

export const noSuchKey = (key: string) => new S3Error("NoSuchKey", "The specified key does not exist.", { Key: key });
export const noSuchBucket = (name: string) =>
  new S3Error("NoSuchBucket", "The specified bucket does not exist.", { BucketName: name });
export const accessDenied = (message = "Access Denied") => new S3Error("AccessDenied", message);
