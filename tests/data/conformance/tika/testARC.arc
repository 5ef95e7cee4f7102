filedesc://example.arc 0.0.0.0 20050614070144 text/plain 1338
1 1 InternetArchive
URL IP-address Archive-date Content-type Archive-length
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<arcmetadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:arc="http://archive.org/arc/1.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://archive.org/arc/1.0/" xsi:schemaLocation="http://archive.org/arc/1.0/ http://www.archive.org/arc/1.0/arc.xsd">
<arc:software>Heritrix 1.5.0-200506132127 http://crawler.archive.org</arc:software>
<arc:hostname>example.org</arc:hostname>
<arc:ip>127.0.0.1</arc:ip>
<dcterms:isPartOf>CRAWL</dcterms:isPartOf>
<dc:description>Example crawl</dc:description>
<arc:operator>Example</arc:operator>
<dc:publisher>Example</dc:publisher>
<dcterms:audience>Example</dcterms:audience>
<ns0:date xmlns:ns0="http://purl.org/dc/elements/1.1/" xsi:type="dcterms:W3CDTF">2005-06-14T06:37:49+00:00</ns0:date>
<arc:http-header-user-agent>Mozilla/5.0 (compatible; heritrix/1.5.0-200506132127 +http://example.org/)</arc:http-header-user-agent>
<arc:http-header-from>example@example.org</arc:http-header-from>
<arc:robots>classic</arc:robots>
<dc:format>ARC file version 1.1</dc:format>
<dcterms:conformsTo xsi:type="dcterms:URI">http://www.archive.org/web/researcher/ArcFileFormat.php</dcterms:conformsTo>
</arcmetadata>

dns:www.law.gov.au 207.241.224.11 20050614070144 text/dns 55
20050614070144
www.law.gov.au.		6858	IN	A	152.91.15.12

http://www.uq.edu.au/robots.txt 130.102.5.51 20050614070151 text/html 524
HTTP/1.1 302 Found
Date: Tue, 14 Jun 2005 07:01:49 GMT
Server: Apache/1.3.28 (Unix) DAV/1.0.3 PHP/4.2.2 mod_perl/1.24_01 mod_ssl/2.8.15 OpenSSL/0.9.7c
Location: http://www.uq.edu.au/
Connection: close
Content-Type: text/html; charset=iso-8859-1

<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">
<HTML><HEAD>
<TITLE>302 Found</TITLE>
</HEAD><BODY>
<H1>Found</H1>
The document has moved <A HREF="http://www.uq.edu.au/">here</A>.<P>
<HR>
<ADDRESS>Apache/1.3.28 Server at www.uq.edu.au Port 80</ADDRESS>
</BODY></HTML>








