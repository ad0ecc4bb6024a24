/** S3's XML: documents built and request bodies parsed with fast-xml-parser. */
import { XMLBuilder, XMLParser } from "fast-xml-parser";
import { S3Error } from "./errors.js";

export const S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/";
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: "@_", suppressEmptyNode: false });
const parser = new XMLParser({
  parseTagValue: false,
  trimValues: false,
  htmlEntities: true,
  ignoreAttributes: true,
  isArray: (name) => name === "Part" || name === "Object",
});

/** One XML document with the S3 namespace on its root element. */
export function xmlDocument(root: string, body: Record<string, unknown>, namespace = true): string {
  return DECLARATION + builder.build({ [root]: namespace ? { "@_xmlns": S3_NS, ...body } : body });
}

export function errorDocument(
  code: string,
  message: string,
  detail: Record<string, string>,
  requestId: string,
): string {
  return xmlDocument("Error", { Code: code, Message: message, ...detail, RequestId: requestId }, false);
}

/** A request body's document, its root element's children; MalformedXML when it is not the expected root. */
export function parseXml(text: string, root: string): Record<string, unknown> {
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(text, true) as Record<string, unknown>;
  } catch {
    throw new S3Error(
      "MalformedXML",
      "The XML you provided was not well-formed or did not validate against our published schema.",
    );
  }
  const content = doc[root];
  if (content === undefined || content === null || typeof content !== "object")
    throw new S3Error("MalformedXML", `The XML you provided has no ${root} element.`);
  return content as Record<string, unknown>;
}

/** S3 dates: 2006-02-03T16:45:09.000Z */
export const isoDate = (d: Date) => d.toISOString();
