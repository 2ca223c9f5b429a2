"""Import a few standard-library packages: the import machinery recurses through
_find_and_load -> exec_module -> <module> -> _find_and_load under many callers."""
import email.mime.multipart
import http.client
import json
import logging.handlers
import xml.etree.ElementTree as ET

doc = ET.fromstring("<a><b x='1'/><b x='2'/></a>")
print(len(doc), json.dumps({"n": len(doc)}), http.client.OK, logging.handlers.RotatingFileHandler,
      email.mime.multipart.MIMEMultipart)
