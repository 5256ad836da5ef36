"""Realistic short documents for classification tests: 6 doctypes x 11 languages.

This is the *tuning* corpus (rules.yaml was written against it). The held-out set that measures
accuracy honestly lives in bench/eval_classify.py and was written separately (other vendors,
topics and wording).

``CORPUS`` is a list of ``(language, doctype, text)``; doctype "other" for the few documents that
are none of the six.
"""

from __future__ import annotations

INVOICES: dict[str, str] = {
    "en": """Northwind Supplies Ltd
14 Harbour Road, Bristol BS1 4DJ
VAT number: GB 284 1917 46

INVOICE
Invoice number: INV-2024-0381
Invoice date: 4 March 2024
Due date: 3 April 2024
Bill to: Kestrel Design Studio, 22 Mill Lane, Bath

Description                 Qty   Unit price   Amount
Office chairs, ergonomic      4     £189.00     £756.00
Delivery and assembly         1      £60.00      £60.00
Net amount                                      £816.00
VAT 20%                                         £163.20
Amount due                                      £979.20

Payment terms: 30 days. Please remit to Barclays, IBAN GB29 NWBK 6016 1331 9268 19
""",
    "de": """Schreinerei Albrecht GmbH · Lindenweg 12 · 79098 Freiburg
USt-IdNr.: DE 287 419 330

Rechnung
Rechnungsnummer: R-2024-1187
Rechnungsdatum: 18.04.2024
Leistungsdatum: 02.04.2024 bis 12.04.2024
Kundennummer: 40213

Pos. Bezeichnung              Menge   Einzelpreis   Gesamt
1    Einbauschrank Eiche        1      2.450,00 €   2.450,00 €
2    Montage (Std.)             6         58,00 €     348,00 €
Nettobetrag                                        2.798,00 €
Umsatzsteuer 19 %                                    531,62 €
Rechnungsbetrag                                    3.329,62 €

Zahlbar bis 02.05.2024 ohne Abzug auf IBAN DE44 6805 0101 0012 3456 78.
""",
    "fr": """Boulangerie Industrielle du Rhône SARL
12 rue des Tanneurs, 69002 Lyon — SIRET 812 334 901 00017

FACTURE N° F-24-0612
Date de facture : 11/05/2024
Date d'échéance : 10/06/2024
Client : Hôtel Bellecour, 3 place Bellecour, 69002 Lyon

Désignation                 Qté    Prix unitaire HT   Montant HT
Pain de campagne 800 g       120      2,10 €            252,00 €
Croissants au beurre         300      0,65 €            195,00 €
Montant HT                                              447,00 €
TVA 5,5 %                                                24,59 €
Net à payer TTC                                         471,59 €

Conditions de paiement : virement à 30 jours, IBAN FR76 3000 6000 0112 3456 7890 189
""",
    "es": """Distribuciones Levante S.L. — CIF B-46123789
Avenida del Puerto 118, 46023 Valencia

FACTURA
Número de factura: 2024/00457
Fecha de factura: 21/02/2024
Fecha de vencimiento: 22/03/2024
Cliente: Restaurante La Albufera, Calle Mayor 9, Sueca

Concepto                    Cantidad   Precio    Importe
Aceite de oliva virgen 5 l     10      32,50 €   325,00 €
Arroz bomba 1 kg               40       4,20 €   168,00 €
Base imponible                                   493,00 €
IVA 10%                                           49,30 €
Importe total                                    542,30 €

Forma de pago: transferencia bancaria a ES91 2100 0418 4502 0005 1332
""",
    "it": """Tipografia Moretti S.r.l.
Via Garibaldi 41, 40124 Bologna — Partita IVA 03124570378

FATTURA N. 214/2024
Data fattura: 07/06/2024
Data di scadenza: 07/07/2024
Spett.le Studio Legale Ferri, Via Indipendenza 8, Bologna

Descrizione                      Q.tà   Prezzo     Importo
Biglietti da visita (500 pz)       2    45,00 €     90,00 €
Carta intestata A4 (1000 fogli)    1   120,00 €    120,00 €
Imponibile                                         210,00 €
IVA 22%                                             46,20 €
Totale documento                                   256,20 €

Modalità di pagamento: bonifico bancario, IBAN IT60 X054 2811 1010 0000 0123 456
""",
    "nl": """Drukkerij Van Dijk B.V.
Kanaalweg 33, 3526 KL Utrecht — KvK 30124578 — BTW-nummer NL8123.45.678.B01

FACTUUR
Factuurnummer: 2024-0932
Factuurdatum: 15-03-2024
Vervaldatum: 14-04-2024
Aan: Bakkerij De Korenschoof, Dorpsstraat 4, Houten

Omschrijving                 Aantal   Prijs     Bedrag
Flyers A5 full colour          2000   0,08 €    160,00 €
Posters A2                       25   3,40 €     85,00 €
Totaal excl. btw                                245,00 €
BTW 21%                                          51,45 €
Te betalen                                      296,45 €

Betalingstermijn 30 dagen. Gelieve over te maken op NL91 ABNA 0417 1643 00.
""",
    "pt": """Papelaria Central, Lda.
Rua de Santa Catarina 210, 4000-447 Porto — NIF 509 876 543

FATURA FT 2024/118
Data de emissão: 03/04/2024
Data de vencimento: 03/05/2024
Cliente: Escola Básica do Bonfim, NIF 600 012 345

Descrição                     Qtd.   Preço unit.   Total
Resmas de papel A4              50      4,20 €     210,00 €
Tinteiros HP 305                12     14,90 €     178,80 €
Valor sem IVA                                      388,80 €
IVA 23%                                             89,42 €
Valor a pagar                                      478,22 €

Pagamento por transferência para PT50 0002 0123 1234 5678 9015 4
""",
    "sv": """Nordljus Elektriska AB
Storgatan 18, 111 51 Stockholm — Org.nr 556677-8899 — Momsreg.nr SE556677889901

FAKTURA
Fakturanummer: 10422
Fakturadatum: 2024-05-06
Förfallodatum: 2024-06-05
Kund: Brf Solrosen, Vasagatan 7, Uppsala

Beskrivning                  Antal   À-pris      Belopp
Byte av belysning, trapphus    1    8 400,00   8 400,00 kr
Arbete, timmar                 6      650,00   3 900,00 kr
Summa exkl. moms                              12 300,00 kr
Moms 25 %                                      3 075,00 kr
Att betala                                    15 375,00 kr

Betalningsvillkor 30 dagar netto. Bankgiro 5050-1055, ange OCR-nummer 1042257.
""",
    "da": """Hansen & Søn VVS ApS
Nørregade 21, 8000 Aarhus C — CVR-nr. 31 24 56 78

FAKTURA
Fakturanummer: 2024-311
Fakturadato: 12.02.2024
Forfaldsdato: 26.02.2024
Kunde: Ejerforeningen Skovbrynet, Skovvej 3, Risskov

Beskrivelse                  Antal   Stk. pris    Beløb
Udskiftning af radiatorventiler  8    425,00     3.400,00 kr.
Arbejdstimer                     5    595,00     2.975,00 kr.
Subtotal                                         6.375,00 kr.
Moms 25 %                                        1.593,75 kr.
At betale                                        7.968,75 kr.

Betalingsbetingelser: netto 14 dage. Reg.nr. 1234 kontonr. 0012345678.
""",
    "zh": """上海明达办公用品有限公司
增值税普通发票
发票代码：031002300111   发票号码：08812345
开票日期：2024年3月15日
购买方：北京华信科技有限公司  纳税人识别号：91110108MA01234X5R
销售方：上海明达办公用品有限公司

货物名称        数量    单价      金额
激光打印纸A4     20     25.00    500.00
墨盒             6     180.00   1080.00
合计金额：¥1580.00
税额：¥205.40
价税合计（大写）壹仟柒佰捌拾伍元肆角   （小写）¥1785.40
付款期限：2024年4月15日前
""",
    "ja": """株式会社青葉システム 御中

請求書
請求番号：INV-2024-0457
請求日：2024年4月30日
お支払期限：2024年5月31日

下記の通りご請求申し上げます。
ご請求金額  ¥132,000（税込）

品目                 数量   単価       金額
システム保守費用（4月分）  1   100,000   100,000
追加作業（時間）          2    10,000    20,000
小計                                 120,000
消費税（10%）                         12,000

振込先：みずほ銀行 渋谷支店 普通 1234567 カ）サクラソフト
適格請求書発行事業者 登録番号 T1234567890123
株式会社サクラソフト
""",
}

RECEIPTS: dict[str, str] = {
    "en": """GREENLEAF MARKET
221 Baker Street, London NW1 6XE
Tel 020 7946 0123

Receipt 0042-1187        12/03/2024 17:42
Cashier: Amy

Semi-skimmed milk 2L        1.45
Sourdough loaf              2.80
Bananas 1.2kg               1.02
Free range eggs x12         3.40
SUBTOTAL                    8.67
TOTAL                      £8.67
Cash                       10.00
Change due                  1.33

Thank you for shopping with us!
""",
    "de": """EDEKA Markt Schulze
Bahnhofstraße 3, 34117 Kassel

Kassenbon                    Kasse 2   Bon 4711
Datum 14.05.2024   Uhrzeit 18:06

Vollmilch 3,5% 1l            1,19 €  A
Roggenbrot 750g              2,49 €  A
Äpfel Elstar 1kg             2,99 €  A
Spülmittel                   1,79 €  B
Summe                        8,46 €
Gegeben bar                 10,00 €
Rückgeld                     1,54 €

MwSt A 7%  0,44   MwSt B 19%  0,29
Vielen Dank für Ihren Einkauf!
""",
    "fr": """CARREFOUR CITY
45 boulevard Voltaire, 75011 Paris

TICKET DE CAISSE
Caisse 03   Caissière : Nadia   22/06/2024 12:31

Baguette tradition          1,30
Camembert de Normandie      3,95
Tomates grappe 1 kg         3,49
Eau minérale 6x1,5 l        2,94
TOTAL TTC                  11,68 €
Espèces                    20,00 €
Rendu monnaie               8,32 €

TVA 5,5%  0,61
Merci de votre visite, à bientôt !
""",
    "es": """SUPERMERCADO EL SOL
Calle Alcalá 88, 28009 Madrid — NIF B-28123456

FACTURA SIMPLIFICADA  T-0023-118842
Fecha 09/01/2024  Hora 19:24  Caja 4  Cajero: Luis

Leche entera 1 l x2           1,98
Pan de barra                  0,85
Jamón serrano 200 g           4,75
Naranjas 2 kg                 3,20
TOTAL                        10,78 €
Efectivo                     20,00 €
Cambio                        9,22 €

IVA incluido. ¡Gracias por su compra!
""",
    "it": """PANIFICIO F.LLI ROSSI
Via Roma 12, 10121 Torino — P.IVA 01234560017

DOCUMENTO COMMERCIALE di vendita o prestazione
Scontrino n. 0087   03-07-2024 08:14

Cornetto alla crema          1,20
Caffè espresso               1,10
Focaccia genovese            2,50
TOTALE COMPLESSIVO           4,80
di cui IVA                   0,55
Pagamento contanti           5,00
Resto                        0,20

Grazie e arrivederci!
""",
    "nl": """ALBERT HEIJN 1421
Oudegracht 140, 3511 AZ Utrecht

Kassabon   Kassa 5   27-08-2024 16:55

Halfvolle melk 1 l            1,15
Goudse kaas jong 500 g        5,49
Appels Elstar 1 kg            2,29
Stroopwafels                  1,99
TOTAAL                       10,92
Pinbetaling                  10,92
Kaart: ****4821

BTW 9%  0,90
Bedankt voor uw aankoop en tot ziens!
""",
    "pt": """PINGO DOCE — Loja Lisboa Saldanha
Av. da República 45, 1050-187 Lisboa  NIF 500 829 993

Talão de compra   Caixa 6   Operador 112
15-10-2024  13:47

Pão de forma                 1,29
Bacalhau demolhado 1 kg      9,99
Azeite 75 cl                 6,49
Vinho tinto Douro            4,99
TOTAL                       22,76 €
Dinheiro                    30,00 €
Troco                        7,24 €

IVA incluído. Obrigado pela sua compra, volte sempre!
""",
    "sv": """ICA Nära Söder
Götgatan 50, 118 26 Stockholm — Org.nr 556123-4567

KVITTO   Kassa 2   Kassör: Erik
2024-09-12  08:41

Mjölk 1,5% 1,5 l             18,90
Kanelbulle                   14,00
Kaffe bryggt 500 g           64,90
Totalt                       97,80 kr
Kort                         97,80 kr
VISA ****1290

Moms 12%  10,48
Tack för ditt köp! Välkommen åter.
""",
    "da": """NETTO Vesterbro
Vesterbrogade 98, 1620 København V

KVITTERING   Kasse 3   Ekspedient: Mette
03.11.2024  17:20

Rugbrød                      16,95
Smør 250 g                   21,50
Æbler 1 kg                   15,00
Kaffe 400 g                  42,00
I ALT                        95,45 kr.
Dankort                      95,45 kr.

Heraf moms 19,09
Tak for dit køb — på gensyn!
""",
    "zh": """华联超市（朝阳店）
北京市朝阳区建国路88号
购物小票
收银台：03   收银员：王丽   2024-06-18 19:32

商品名称        数量   金额
鲜牛奶 1L         2    25.80
面包             1     9.50
苹果 1.5kg       1    14.20
合计                  49.50
实收现金              100.00
找零                  50.50

谢谢惠顾，欢迎再次光临！
""",
    "ja": """ファミリーマート 新宿三丁目店
東京都新宿区新宿3-1-1
電話 03-1234-5678

領収書
2024年7月2日(火) 12:18  レジ02  担当 佐藤

おにぎり 鮭            ¥160
緑茶 500ml             ¥140
サンドイッチ            ¥330
小計                   ¥630
消費税等(8%)            ¥50
合計                   ¥680
お預かり             ¥1,000
お釣り                 ¥320

毎度ありがとうございます。またのご来店をお待ちしております。
""",
}

CONTRACTS: dict[str, str] = {
    "en": """SERVICE AGREEMENT

This Agreement is made on 1 February 2024 (the "Effective Date") between
Brightside Analytics Ltd, 5 King Street, Manchester (hereinafter "the Provider") and
Harlow Retail plc, 80 Queen's Road, Leeds (hereinafter "the Client"), together "the Parties".

1. Services. The Provider shall deliver monthly sales reports as described in Schedule A.
2. Term. This Agreement runs for twelve (12) months from the Effective Date.
3. Fees. The Client shall pay £2,500 per month within 30 days of each invoice.
4. Termination. Either party may terminate this Agreement with 60 days' written notice.
5. Governing law. This Agreement is governed by the laws of England and Wales.

IN WITNESS WHEREOF the Parties have signed this Agreement.
Signature: ____________________      Signature: ____________________
""",
    "de": """Mietvertrag für Wohnräume

zwischen Frau Ingrid Becker, Goethestraße 4, 04109 Leipzig (nachfolgend Vermieter)
und Herrn Jonas Weber, geboren am 12.08.1991 (nachfolgend Mieter).

§ 1 Mietsache
Vermietet wird die Wohnung im 2. OG links, bestehend aus drei Zimmern, Küche und Bad.
§ 2 Mietzeit
Das Mietverhältnis beginnt am 01.06.2024 und läuft auf unbestimmte Zeit.
§ 3 Miete
Die monatliche Kaltmiete beträgt 780,00 EUR zuzüglich Nebenkosten von 190,00 EUR.
§ 4 Kündigung
Die Kündigungsfrist richtet sich nach § 573c BGB.

Leipzig, den 15.05.2024
Unterschrift Vermieter                  Unterschrift Mieter
""",
    "fr": """CONTRAT DE PRESTATION DE SERVICES

Entre les soussignés :
La société Graphisme & Co, SARL au capital de 10 000 €, 8 rue Nationale, 59000 Lille,
ci-après dénommée « le Prestataire »,
et l'association Les Amis du Vieux-Lille, ci-après dénommée « le Client ».

Article 1 – Objet : le Prestataire réalise la charte graphique du Client.
Article 2 – Durée du contrat : le présent contrat est conclu pour une durée de six mois.
Article 3 – Prix : 4 800 € HT, payables en deux échéances.
Article 4 – Résiliation : chacune des parties peut résilier le contrat par lettre recommandée.
Article 5 – Loi applicable : droit français, tribunaux de Lille compétents.

Fait à Lille, le 2 septembre 2024, en deux exemplaires.
""",
    "es": """CONTRATO DE ARRENDAMIENTO DE VIVIENDA

En Sevilla, a 1 de marzo de 2024.

REUNIDOS
De una parte, D. Manuel Ortega Ruiz, con DNI 28765432-K, en adelante el ARRENDADOR.
De otra parte, Dña. Lucía Navarro Gil, con DNI 45123987-M, en adelante el ARRENDATARIO.

EXPONEN que el arrendador es propietario de la vivienda sita en Calle Feria 22, 2º B.

CLÁUSULAS
Primera. Duración del contrato: un año, prorrogable por períodos anuales.
Segunda. Renta: 850 euros mensuales, pagaderos dentro de los cinco primeros días del mes.
Tercera. Fianza: una mensualidad.

Y en prueba de conformidad, las partes firman el presente contrato por duplicado.
Firma del arrendador                    Firma del arrendatario
""",
    "it": """CONTRATTO DI LOCAZIONE AD USO ABITATIVO

Con la presente scrittura privata tra il Sig. Paolo Bianchi, nato a Firenze il 3/4/1965,
di seguito denominato "locatore", e la Sig.ra Giulia Conti, di seguito denominata "conduttore",
le parti convengono quanto segue.

Art. 1 – Oggetto: il locatore concede in locazione l'appartamento in Via dei Serragli 14, Firenze.
Art. 2 – Durata del contratto: quattro anni a decorrere dal 1° ottobre 2024.
Art. 3 – Canone: euro 950 mensili.
Art. 4 – Recesso: il conduttore può recedere con preavviso di sei mesi.
Art. 5 – Foro competente: per ogni controversia è competente il Foro di Firenze.

Letto, approvato e sottoscritto. Firenze, 20 settembre 2024
Firma del locatore            Firma del conduttore
""",
    "nl": """ARBEIDSOVEREENKOMST VOOR BEPAALDE TIJD

De ondergetekenden:
1. Bouwbedrijf De Vries B.V., gevestigd te Zwolle, hierna te noemen "werkgever", en
2. Mevrouw Sanne Bakker, wonende te Kampen, hierna te noemen "werknemer",

verklaren een arbeidsovereenkomst te zijn aangegaan onder de volgende bepalingen.

Artikel 1 Functie: werknemer treedt in dienst als projectassistent.
Artikel 2 Looptijd: de overeenkomst geldt van 1 april 2024 tot en met 31 maart 2025.
Artikel 3 Salaris: 3.150 euro bruto per maand bij 38 uur per week.
Artikel 4 Opzegging: beide partijen nemen een opzegtermijn van één maand in acht.

Aldus overeengekomen en in tweevoud getekend te Zwolle op 15 maart 2024.
Handtekening werkgever              Handtekening werknemer
""",
    "pt": """CONTRATO DE PRESTAÇÃO DE SERVIÇOS

Pelo presente instrumento particular, de um lado Construtora Horizonte Ltda., CNPJ
12.345.678/0001-90, doravante denominada CONTRATANTE, e de outro lado João Pedro Almeida,
CPF 123.456.789-00, doravante denominado CONTRATADO, as partes acordam o seguinte:

Cláusula 1ª – Objeto: projeto elétrico do edifício Residencial Ipê, em Campinas.
Cláusula 2ª – Vigência: 90 dias a contar da assinatura deste contrato.
Cláusula 3ª – Valor: R$ 18.000,00, pagos em três parcelas.
Cláusula 4ª – Rescisão: o descumprimento de qualquer cláusula permite a rescisão imediata.
Cláusula 5ª – Foro: fica eleito o foro da comarca de Campinas.

Campinas, 5 de agosto de 2024.
Assinatura da contratante              Assinatura do contratado
""",
    "sv": """HYRESAVTAL FÖR BOSTADSLÄGENHET

Hyresvärd: Fastighets AB Lindgården, org.nr 556012-3456
Hyresgäst: Anna Lindqvist, personnummer 890412-1234
nedan kallade parterna.

1. Lägenhet: 2 rum och kök, 54 kvm, Kungsgatan 12, 411 19 Göteborg.
2. Avtalstid: avtalet gäller från och med 2024-07-01 tills vidare.
3. Hyra: 7 850 kr per månad, betalas i förskott senast sista vardagen före varje månad.
4. Uppsägning: uppsägningstiden är tre månader.
5. Hyresgästen får inte hyra ut lägenheten i andra hand utan hyresvärdens samtycke.

Detta avtal har upprättats i två likalydande exemplar.
Göteborg 2024-06-10
Underskrift hyresvärd                 Underskrift hyresgäst
""",
    "da": """LEJEKONTRAKT FOR BEBOELSE

Mellem udlejer Ejendomsselskabet Havnegade ApS, CVR 12345678,
og lejer Peter Mikkelsen, herefter kaldet parterne, er indgået følgende aftale:

§ 1 Det lejede: lejlighed på 3 værelser, Havnegade 14, 2. tv., 5000 Odense C.
§ 2 Lejeforholdets begyndelse: 1. august 2024. Lejemålet er tidsubestemt.
§ 3 Husleje: 8.200 kr. pr. måned, forfalder den 1. i hver måned.
§ 4 Depositum: svarende til tre måneders husleje.
§ 5 Opsigelse: lejer kan opsige lejemålet med tre måneders varsel.

Odense, den 1. juli 2024
Underskrift udlejer                   Underskrift lejer
""",
    "zh": """技术服务合同

合同编号：JS-2024-0312
甲方：杭州云帆网络科技有限公司
乙方：上海数智信息技术有限公司

甲乙双方经友好协商，就软件开发服务事宜签订本合同，共同遵守。
第一条 服务内容：乙方为甲方开发客户管理系统。
第二条 合同期限：自2024年4月1日起至2024年12月31日止。
第三条 合同金额：人民币贰拾万元整（¥200,000.00）。
第四条 违约责任：任何一方违约，应向对方支付合同金额百分之十的违约金。
第五条 本合同一式两份，甲乙双方各执一份，自双方签字盖章之日起生效。

甲方（盖章）：              乙方（盖章）：
签订日期：2024年3月28日
""",
    "ja": """業務委託契約書

株式会社ミドリ商会（以下「甲」という）と山本デザイン事務所（以下「乙」という）は、
次のとおり業務委託契約を締結する。

第1条（目的）甲は乙に対し、甲の商品カタログのデザイン業務を委託する。
第2条（契約期間）本契約の有効期間は2024年5月1日から2025年4月30日までとする。
第3条（委託料）甲は乙に対し、月額300,000円（税別）を支払う。
第4条（解除）甲又は乙は、相手方が本契約に違反したときは、本契約を解除することができる。
第5条（協議）本契約に定めのない事項は、甲乙協議の上決定する。

本契約の成立を証するため本書2通を作成し、甲乙記名押印の上、各1通を保有する。
2024年4月20日
""",
}

BANK_STATEMENTS: dict[str, str] = {
    "en": """Lloyds Bank plc
Account statement
Mr Daniel Hughes, 7 Elm Close, Reading RG1 2AB
Sort code 30-94-57   Account number 12345678
Statement period: 01/05/2024 to 31/05/2024

Date        Description                   Debit      Credit     Balance
01 May      Opening balance                                     2,341.18
03 May      TESCO STORES 2241             54.20                 2,286.98
10 May      SALARY ACME LTD                          2,950.00   5,236.98
15 May      DD THAMES WATER               38.50                 5,198.48
28 May      STANDING ORDER RENT          950.00                 4,248.48
31 May      Closing balance                                     4,248.48
""",
    "de": """Sparkasse Hannover
Kontoauszug Nr. 5/2024            Blatt 1 von 1
Kontoinhaber: Maria Schneider
IBAN: DE12 2505 0180 0012 3456 78   BIC: SPKHDE2HXXX

Buchungstag  Wertstellung  Vorgang                         Betrag
02.05.2024   02.05.2024    Lastschrift Stadtwerke Hannover   -84,00
06.05.2024   06.05.2024    Gutschrift Gehalt Mai           2.412,55
13.05.2024   13.05.2024    Kartenzahlung REWE Markt          -63,17
27.05.2024   27.05.2024    Dauerauftrag Miete               -720,00

Alter Kontostand vom 30.04.2024               1.104,32 EUR
Neuer Kontostand vom 31.05.2024               2.649,70 EUR
""",
    "fr": """Crédit Agricole Centre-Est
RELEVÉ DE COMPTE
Compte courant n° 00012345678 — M. Julien Morel
Période du 01/03/2024 au 31/03/2024

Date     Libellé des opérations            Débit      Crédit
01/03    Ancien solde                                  1 845,20
04/03    Prélèvement EDF                    72,40
08/03    Virement salaire SAS Dupont                  2 310,00
15/03    Carte 14/03 Monoprix Lyon          48,95
25/03    Prélèvement loyer                 690,00
31/03    Nouveau solde                                3 343,85

Date de valeur indiquée pour chaque opération. IBAN FR76 1750 6000 3200 0123 4567 890
""",
    "es": """Banco Santander
EXTRACTO DE CUENTA
Titular: Carmen López Díaz   Número de cuenta: ES80 0049 1500 0512 3456 7892
Periodo: 01/04/2024 - 30/04/2024

Fecha      Fecha valor   Concepto                         Importe      Saldo
01/04      01/04         Saldo anterior                                1.520,40
03/04      03/04         Recibo Iberdrola                 -61,30      1.459,10
05/04      05/04         Transferencia nómina           1.980,00      3.439,10
12/04      12/04         Compra tarjeta Mercadona         -87,45      3.351,65
30/04      30/04         Saldo final                                   3.351,65

Movimientos del periodo: 3
""",
    "it": """Intesa Sanpaolo
ESTRATTO CONTO CORRENTE al 30/06/2024
Intestatario: Marco Ricci — Conto corrente n. 1000/00012345
IBAN IT60 X030 6909 6061 0000 0012 345

Data contabile  Data valuta  Descrizione movimenti           Addebiti   Accrediti
01/06/2024                   Saldo iniziale                              2.105,90
04/06/2024      04/06/2024   Addebito SDD Enel Energia        95,20
10/06/2024      10/06/2024   Accredito stipendio                         2.250,00
18/06/2024      18/06/2024   Bonifico a favore di Rossi A.   300,00
30/06/2024                   Saldo finale                                3.960,70
""",
    "nl": """ING Bank N.V.
Rekeningafschrift nr. 6 — periode 01-06-2024 t/m 30-06-2024
Rekeningnummer NL20 INGB 0001 2345 67 — J. de Boer

Datum      Omschrijving                        Bij/Af    Bedrag
           Beginsaldo                                    1.230,55
03-06      Albert Heijn 1421 Utrecht           Af          42,18
05-06      Salaris Gemeente Utrecht            Bij      2.870,00
12-06      Incasso Eneco                       Af         118,00
20-06      Overboeking huur                    Af         925,00
           Eindsaldo                                    3.015,37

Rentedatum gelijk aan boekdatum. Mutaties: 4
""",
    "pt": """Caixa Geral de Depósitos
EXTRATO DE CONTA À ORDEM — Conta corrente n.º 0123 456789 300
Titular: Ana Sofia Ferreira   Período: 01/02/2024 a 29/02/2024

Data mov.  Data valor  Descrição                       Débito     Crédito     Saldo
01/02                  Saldo inicial                                           980,35
02/02      02/02       Transferência recebida salário               1.650,00   2.630,35
09/02      09/02       Débito direto EDP Comercial      56,80                  2.573,55
16/02      16/02       Compra MB Continente             73,12                  2.500,43
29/02                  Saldo disponível                                      2.500,43

Movimentos do período: 3. IBAN PT50 0035 0123 0004 5678 9300 2
""",
    "sv": """Handelsbanken
KONTOUTDRAG   Period 2024-03-01 – 2024-03-31
Kontohavare: Lars Johansson
Clearingnummer 6123  Kontonummer 123 456 789

Bokföringsdag  Transaktioner                   Insättning    Uttag       Saldo
2024-03-01     Ingående saldo                                          8 412,50
2024-03-05     Kortköp ICA Maxi                               612,40   7 800,10
2024-03-25     Lön Volvo Cars AB               31 200,00               39 000,10
2024-03-27     Hyra Bostads AB                               9 850,00  29 150,10
2024-03-31     Utgående saldo                                          29 150,10
""",
    "da": """Danske Bank
KONTOUDTOG nr. 4 — 01.04.2024 - 30.04.2024
Lønkonto, reg.nr. 3001 kontonummer 4567890123 — Sofie Nielsen

Dato     Tekst                               Rentedato    Beløb        Saldo
01.04    Saldo primo                                                    6.540,25
02.04    Dankort Føtex                      02.04        -312,75      6.227,50
05.04    Løn fra Novo Nordisk A/S            05.04      28.450,00     34.677,50
10.04    Betalingsservice husleje            10.04      -9.800,00     24.877,50
30.04    Saldo ultimo                                                   24.877,50

Posteringer i perioden: 3
""",
    "zh": """招商银行 个人账户对账单
户名：李明   账号：6225 8812 3456 7890   开户行：招商银行深圳分行
对账期间：2024年5月1日至2024年5月31日

交易日期     摘要           支出         收入        账户余额
2024-05-01   期初余额                                12,350.00
2024-05-05   工资                        15,800.00   28,150.00
2024-05-10   支付宝消费     268.50                   27,881.50
2024-05-20   房租转账       4,500.00                 23,381.50
2024-05-31   期末余额                                23,381.50
交易明细共3笔
""",
    "ja": """三井住友銀行
普通預金 入出金明細
口座番号 1234567   お名前 田中 一郎 様
期間 2024年6月1日～2024年6月30日

取引日      お取引内容          お支払金額     お預り金額     差引残高
2024/06/03  カード ローソン        1,280                     251,720
2024/06/10  振込 カ）ヤマダ商事               320,000        571,720
2024/06/25  口座振替 東京電力      8,540                     563,180
2024/06/27  ATM 出金              50,000                     513,180
""",
}

PAPERS: dict[str, str] = {
    "en": """Sparse Attention for Long-Document Retrieval

Emily Carter, Rahul Mehta — Department of Computer Science, University of Edinburgh

Abstract
In this paper we propose a sparse attention mechanism that scales linearly with document
length. Experiments on three retrieval benchmarks show gains of 4.2 nDCG points over dense
baselines [3, 7].

Keywords: information retrieval, transformers, sparse attention

1 Introduction
Dense retrieval models (Karpukhin et al., 2020) struggle with inputs beyond 512 tokens.
Our method attends to $k = O(\\sqrt{n})$ positions per query, see Figure 2.

References
[1] V. Karpukhin et al. Dense passage retrieval. EMNLP 2020. doi:10.18653/v1/2020.emnlp-main.550
""",
    "de": """Einfluss der Bodenfeuchte auf den Ertrag von Winterweizen

Katharina Vogel, Thomas Brandt — Institut für Agrarwissenschaften, Universität Göttingen

Zusammenfassung
In dieser Arbeit untersuchen wir den Zusammenhang zwischen Bodenfeuchte und Kornertrag
an 24 Standorten in Niedersachsen. Die Ergebnisse zeigen einen signifikanten Effekt
(p < 0,01) in Trockenjahren.

Schlüsselwörter: Bodenfeuchte, Winterweizen, Ertragsmodellierung

1 Einleitung
Frühere Studien (Müller et al., 2019) haben den Einfluss der Temperatur betont.

Literatur
[1] Müller, A. et al. (2019): Klimawandel und Ertrag. Journal of Agronomy 12, 45–61.
""",
    "fr": """Modélisation de la dispersion des polluants en milieu urbain

Claire Fontaine, Hugo Marchand — Laboratoire de Mécanique des Fluides, Université de Nantes

Résumé
Dans cet article, nous présentons un modèle numérique de dispersion des particules fines
dans les rues canyons. Les résultats sont comparés à des mesures réalisées à Nantes.

Mots-clés : pollution atmosphérique, simulation numérique, rue canyon

1. Introduction
La concentration $C(x,t)$ vérifie l'équation d'advection-diffusion (Durand et al., 2018).

Références
[1] Durand, P. et al. (2018). Atmospheric Environment, 175, 1–12.
""",
    "es": """Detección temprana de sequías mediante imágenes de satélite

Javier Romero, Elena Castillo — Departamento de Geografía, Universidad de Granada

Resumen
En este trabajo se presenta un índice de vegetación combinado para detectar sequías
agrícolas con dos semanas de antelación. Los resultados muestran una precisión del 87 %.

Palabras clave: teledetección, sequía, NDVI

1. Introducción
Los métodos clásicos (García et al., 2017) dependen de estaciones meteorológicas.

Referencias
[1] García, M. et al. (2017). Remote Sensing of Environment, 198, 45–58.
""",
    "it": """Un modello stocastico per la diffusione delle epidemie nelle reti sociali

Luca Ferrari, Chiara Galli — Dipartimento di Matematica, Università di Padova

Sommario
In questo lavoro proponiamo un modello SIR su grafi dinamici. I risultati delle simulazioni
mostrano che la soglia epidemica dipende dalla varianza del grado.

Parole chiave: epidemiologia, reti complesse, processi stocastici

1 Introduzione
Il numero di riproduzione $R_0 = \\beta / \\gamma$ è stato studiato da Rossi et al. (2020).

Bibliografia
[1] Rossi, G. et al. (2020). Physical Review E 101, 032301.
""",
    "nl": """Effect van groene daken op de temperatuur in Rotterdamse wijken

Pieter Jansen, Lotte Visser — Faculteit Bouwkunde, Technische Universiteit Delft

Samenvatting
In dit artikel onderzoeken we het verkoelende effect van groene daken met metingen in
twaalf wijken. De resultaten laten een daling van gemiddeld 1,3 °C zien.

Trefwoorden: stedelijk hitte-eiland, groene daken, klimaatadaptatie

1 Inleiding
Eerdere studies (De Graaf et al., 2021) richtten zich vooral op afzonderlijke gebouwen.

Referenties
[1] De Graaf, M. et al. (2021). Urban Climate 38, 100912.
""",
    "pt": """Avaliação de modelos de linguagem para a língua portuguesa

Ricardo Sousa, Mariana Costa — Departamento de Informática, Universidade de Coimbra

Resumo
Neste trabalho avaliamos cinco modelos de linguagem em tarefas de classificação de texto
em português europeu e brasileiro. Os resultados indicam diferenças de até 6 pontos.

Palavras-chave: processamento de linguagem natural, avaliação, português

1 Introdução
Trabalhos anteriores (Oliveira et al., 2022) usaram apenas corpora brasileiros.

Referências
[1] Oliveira, T. et al. (2022). Proceedings of PROPOR, 112–121.
""",
    "sv": """Mikroplaster i sediment från Östersjön

Karin Holm, Johan Berg — Institutionen för miljövetenskap, Stockholms universitet

Sammanfattning
I denna studie kvantifierar vi mikroplaster i sedimentkärnor från tolv provplatser.
Resultaten visar en ökning med 40 % sedan 1990.

Nyckelord: mikroplast, sediment, Östersjön

1 Inledning
Tidigare undersökningar (Lindgren et al., 2018) fokuserade på ytvatten.

Referenser
[1] Lindgren, S. et al. (2018). Marine Pollution Bulletin 131, 201–210.
""",
    "da": """Vindmøllers påvirkning af trækfugle i Nordsøen

Mads Kristensen, Ida Poulsen — Institut for Bioscience, Aarhus Universitet

Resumé
I denne artikel analyserer vi radardata fra tre havvindmølleparker. Resultaterne viser,
at fuglene ændrer flyvehøjde i op til 2 km afstand.

Nøgleord: trækfugle, havvind, radar

1 Indledning
Tidligere studier (Jensen et al., 2016) byggede på visuelle observationer.

Referencer
[1] Jensen, K. et al. (2016). Journal of Applied Ecology 53, 1321–1330.
""",
    "zh": """基于深度学习的中文古籍文字识别方法研究

张伟，刘芳 —— 北京大学信息科学技术学院

摘要：本文提出一种结合注意力机制的古籍文字识别方法。实验结果表明，该方法在
公开数据集上的识别准确率达到96.3%，优于现有方法。

关键词：古籍数字化；文字识别；深度学习

1 引言
古籍文字识别面临字形变化多、样本少等问题[1]。

参考文献
[1] 王强，等. 古籍图像识别综述[J]. 中文信息学报，2021，35(4)：1-12.
""",
    "ja": """深層学習を用いた手書き文字認識の高精度化

鈴木 健太、高橋 美咲 —— 東京大学大学院情報理工学系研究科

要旨
本研究では、データ拡張と自己教師あり学習を組み合わせた手書き文字認識手法を提案する。
実験の結果、認識率は従来手法より3.1ポイント向上した。

キーワード：文字認識、深層学習、自己教師あり学習

1. はじめに
手書き文字認識は郵便物の区分などに用いられている[1]。

参考文献
[1] 山田 太郎 他：文字認識の最近の動向，電子情報通信学会論文誌，2020.
""",
}

LETTERS: dict[str, str] = {
    "en": """Margaret Collins
12 Willow Avenue
Oxford OX2 6LE

15 April 2024

Mr James Turner
Turner & Sons Builders
3 Station Road, Witney

Dear Mr Turner,

Thank you for finishing the extension to our kitchen last month. I am writing to ask
whether you could come back to look at a small crack that has appeared above the window.
I am at home most mornings and would be grateful if you could call me to arrange a visit.

Yours sincerely,
Margaret Collins
""",
    "de": """Familie Hoffmann
Am Stadtpark 9
90402 Nürnberg

Nürnberg, 3. Juni 2024

Stadtbibliothek Nürnberg
Leserservice
Gewerbemuseumsplatz 4

Betreff: Verlängerung meines Leseausweises

Sehr geehrte Damen und Herren,

leider konnte ich meinen Leseausweis nicht rechtzeitig verlängern, da ich im Ausland war.
Ich bitte Sie, den Ausweis um ein weiteres Jahr zu verlängern.

Mit freundlichen Grüßen
Sabine Hoffmann
""",
    "fr": """Pierre Lambert
7 allée des Cerisiers
33000 Bordeaux

Bordeaux, le 12 février 2024

Madame la Directrice
École élémentaire Jean Jaurès

Objet : demande d'autorisation d'absence

Madame la Directrice,

Je vous prie de bien vouloir autoriser mon fils Lucas, élève de CM1, à s'absenter le
vendredi 23 février pour assister au mariage de sa tante en Bretagne.

Veuillez agréer, Madame, l'expression de mes salutations distinguées.
Pierre Lambert
""",
    "es": """Ana María Ruiz
Calle de la Paz 15, 3º A
29001 Málaga

Málaga, 8 de mayo de 2024

Ayuntamiento de Málaga
Área de Medio Ambiente

Asunto: ruido nocturno en la calle de la Paz

Estimados señores:

Me dirijo a ustedes para comunicarles las molestias que causan los contenedores que se
vacían cada noche a las tres de la madrugada. Les agradecería que estudiaran un cambio
de horario.

Atentamente,
Ana María Ruiz
""",
    "it": """Giovanni Esposito
Via Toledo 256
80134 Napoli

Napoli, 14 marzo 2024

Spett.le Condominio Parco Verde
c.a. Amministratore Dott. Russo

Oggetto: infiltrazioni d'acqua nel box auto

Gentile Dottore,

Le scrivo per segnalare che dopo le piogge della settimana scorsa si sono verificate
nuove infiltrazioni nel mio box. Le chiedo cortesemente di far intervenire una ditta.

In attesa di un Vostro riscontro, porgo distinti saluti.
Giovanni Esposito
""",
    "nl": """M. Hendriks
Lindelaan 22
5611 AB Eindhoven

Eindhoven, 21 oktober 2024

Gemeente Eindhoven
Afdeling Parkeren

Betreft: bezwaar parkeerboete

Geachte heer, mevrouw,

Op 14 oktober ontving ik een parkeerboete terwijl mijn parkeervergunning zichtbaar achter
de voorruit lag. Hierbij maak ik bezwaar en stuur ik een kopie van de vergunning mee.

Met vriendelijke groet,
Marieke Hendriks
""",
    "pt": """Luísa Martins
Rua do Sol, 48
1200-413 Lisboa

Lisboa, 9 de setembro de 2024

Exmo. Senhor
Diretor do Agrupamento de Escolas de Alvalade

Assunto: pedido de transferência de turma

Exmo. Senhor Diretor,

Venho por este meio solicitar a transferência da minha filha Inês para a turma da manhã,
uma vez que o meu novo horário de trabalho não me permite buscá-la ao fim da tarde.

Com os melhores cumprimentos,
Luísa Martins
""",
    "sv": """Eva Nyström
Björkvägen 5
752 36 Uppsala

Uppsala den 2 maj 2024

Uppsala kommun
Kultur- och fritidsförvaltningen

Ärende: ansökan om föreningsbidrag

Hej!

Jag skriver å vägnar av Uppsala Schackklubb för att ansöka om bidrag till vår
ungdomsverksamhet under hösten. Vi har i dag 42 aktiva medlemmar under 18 år.

Med vänliga hälsningar
Eva Nyström, ordförande
""",
    "da": """Lars Thomsen
Strandvejen 112
2900 Hellerup

Hellerup, 18. marts 2024

Gentofte Kommune
Teknik og Miljø

Vedrørende: beskæring af træer på Strandvejen

Kære Gentofte Kommune

Jeg vil gerne gøre opmærksom på, at grenene fra kommunens træer ud for nr. 112 nu
hænger ud over fortovet og generer fodgængere. Jeg håber, at I kan se på det snarest.

Med venlig hilsen
Lars Thomsen
""",
    "zh": """尊敬的王经理：

您好！

感谢贵公司长期以来对我们工作的支持。我司计划于2024年6月在杭州举办年度客户交流会，
诚挚邀请您拨冗出席。会议具体安排请见附件，如有任何问题，请随时与我联系。

期待您的回复。

此致
敬礼！

陈晓红
杭州明远科技有限公司 市场部
2024年5月10日
""",
    "ja": """拝啓　新緑の候、貴社ますますご清栄のこととお慶び申し上げます。

平素は格別のお引き立てを賜り、厚く御礼申し上げます。
さて、このたび弊社は本社を下記の住所に移転することとなりました。
これを機に社員一同より一層業務に精励いたす所存でございますので、
今後とも変わらぬご愛顧を賜りますようお願い申し上げます。

敬具

2024年5月吉日
株式会社ヒカリ印刷 代表取締役 中村 浩
""",
}

# Documents that are none of the six: they must stay "other" (guards against thresholds so low
# that everything becomes a letter or an invoice).
OTHERS: dict[str, str] = {
    "en": """Banana bread

Ingredients: 3 ripe bananas, 75 g melted butter, 150 g sugar, 1 egg, 1 tsp vanilla,
1 tsp baking soda, a pinch of salt, 190 g flour.
Preheat the oven to 175 °C. Mash the bananas, stir in the butter, then the sugar, egg and
vanilla. Add baking soda and salt, mix in the flour. Bake in a loaf tin for about 60 minutes.
Serves 8.
""",
    "de": """Bedienungsanleitung Wasserkocher WK 200

Sicherheitshinweise
Das Gerät nur mit Wasser füllen. Nicht in Betrieb nehmen, wenn das Kabel beschädigt ist.
Kinder ab 8 Jahren dürfen das Gerät nur unter Aufsicht benutzen.
Inbetriebnahme
1. Deckel öffnen und Wasser bis zur MAX-Markierung einfüllen.
2. Den Schalter nach unten drücken; die Kontrollleuchte leuchtet.
3. Das Gerät schaltet sich automatisch ab, sobald das Wasser kocht.
""",
    "fr": """Le marché de Noël ouvre ses portes samedi

Du 30 novembre au 24 décembre, une cinquantaine de chalets s'installent place Kléber.
Artisans, producteurs locaux et associations y proposeront décorations, vin chaud et
pain d'épices. La municipalité prévoit un renforcement des transports en commun le week-end.
Horaires : tous les jours de 11 h à 20 h.
""",
    "es": """Horario de la biblioteca municipal

De lunes a viernes: de 9:00 a 21:00
Sábados: de 10:00 a 14:00
Domingos y festivos: cerrado
Durante el mes de agosto la biblioteca abrirá solo por las mañanas.
El préstamo de libros es gratuito con el carné de lector.
""",
    "nl": """Notulen bewonersoverleg 12 maart

Aanwezig: 14 bewoners, wijkagent, opbouwwerker.
1. Opening en mededelingen. De speeltuin wordt in mei opgeknapt.
2. Parkeren. Bewoners klagen over foutparkeerders bij de school.
3. Rondvraag. Voorstel om een buurtapp te starten wordt aangenomen.
Volgende vergadering: 9 april, 19.30 uur in het buurthuis.
""",
    "zh": """番茄炒蛋做法

材料：番茄两个，鸡蛋三个，盐、糖少许，葱花适量。
步骤：
一、番茄切块，鸡蛋打散加少许盐。
二、热锅倒油，先炒鸡蛋，盛出备用。
三、再炒番茄至出汁，加入鸡蛋翻炒，加糖调味，撒上葱花即可。
""",
    "ja": """図書館からのお知らせ

年末年始の休館日について
12月29日から1月3日まで休館いたします。
返却は入口横のブックポストをご利用ください。
なお、1月4日は午前10時から開館します。
""",
    "sv": """Väderprognos för helgen

Lördag: mestadels soligt, 12–15 grader, svag vind från väst.
Söndag: ökande molnighet och regn från eftermiddagen, 10–13 grader.
I fjällen kan det bli snöblandat regn under natten mot måndag.
""",
}

DOCTYPE_TEXTS: dict[str, dict[str, str]] = {
    "invoice": INVOICES,
    "receipt": RECEIPTS,
    "contract": CONTRACTS,
    "bank_statement": BANK_STATEMENTS,
    "scientific_paper": PAPERS,
    "letter": LETTERS,
}

CORPUS: list[tuple[str, str, str]] = [
    (lang, doctype, text) for doctype, by_lang in DOCTYPE_TEXTS.items() for lang, text in by_lang.items()
] + [(lang, "other", text) for lang, text in OTHERS.items()]
