"""Held-out evaluation of language + doctype classification with the shipped rules.yaml.

Each held-out document below (6 doctypes x 11 languages, written separately from the tuning
corpus tests/corpus.py: other vendors, topics, layouts and wording) is rendered to a page image
(tests/docgen.py), OCRed by the real Tesseract engine (daemon.engines.tesseract), classified with
the shipped rules.yaml, and scored: language accuracy, doctype accuracy, confusion. Two renderings:
"clean" (as rendered) and "scanned" (skew, blur, speckle, JPEG artefacts). A short-text part
measures detect_language against py3langid alone on 1-2 sentence texts with simulated OCR damage.

Do not tune rules.yaml against these texts; if you do, write a new held-out set.

Run:  OMP_THREAD_LIMIT=1 .venv/bin/python bench/eval_classify.py [--no-ocr] [--modes clean,scanned]
Results: bench/RESULTS.md, section "Classification".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import unicodedata
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Debian Tesseract: 8x slower on 2 cores otherwise

INVOICE = {
    "en": """Cobalt Cloud Hosting Inc.
500 Pine Street, Suite 1200, Seattle WA 98101
Tax ID 91-2345678

INVOICE #CC-88213
Issued: June 1, 2024     Payment due: June 15, 2024
Customer: Lumen Photo Co., 18 Oak Street, Portland OR

Item                               Period          Amount
Managed server M2 (x3)             May 2024        $ 540.00
Backup storage 500 GB              May 2024        $  45.00
Support plan Gold                  May 2024        $ 120.00
Subtotal                                           $ 705.00
Sales tax 6.5%                                     $  45.83
Total due                                          $ 750.83

Pay online or by wire. Late payments incur a 1.5% monthly fee.
""",
    "de": """Hotel Alpenblick KG · Seestraße 1 · 82487 Oberammergau
Steuernummer 141/523/60012

Herrn Dr. Frank Meier
Kastanienallee 8, 10435 Berlin

Rechnung Nr. 24-3310          Datum: 09.08.2024
Aufenthalt vom 04.08.2024 bis 08.08.2024, Zimmer 214

4 Übernachtungen Doppelzimmer à 145,00 €      580,00 €
Frühstück 8 x 18,00 €                        144,00 €
Kurtaxe 8 x 2,50 €                            20,00 €
Gesamtbetrag                                 744,00 €
darin enthaltene MwSt. 7 %: 47,10 €

Der Betrag ist innerhalb von 14 Tagen zu überweisen. Bankverbindung: Raiffeisenbank, IBAN DE02 7016 9460 0000 1234 56
""",
    "fr": """Cabinet Comptable Girard & Associés
24 avenue Jean Médecin, 06000 Nice — TVA intracommunautaire FR 42 512 345 678

Facture n° 2024-0917 du 30 septembre 2024
Client : Boutique Lavande SAS, 5 rue de la Liberté, Nice

Prestation                                          Montant HT
Tenue de la comptabilité (3e trimestre)              1 350,00
Déclaration de TVA mensuelle (x3)                      270,00
Total HT                                             1 620,00 €
TVA 20 %                                               324,00 €
Total TTC                                            1 944,00 €

Règlement à réception de facture par virement. Pénalités de retard : 3 fois le taux d'intérêt légal.
""",
    "es": """Talleres Mecánicos Hermanos Vidal, S.L.
Polígono Industrial Norte, nave 7, 50014 Zaragoza — NIF B-50998877

Factura nº A-2024-1502
Fecha: 17 de julio de 2024
Cliente: Transportes Ebro S.A. — Vehículo matrícula 4521-KLM

Descripción                           Unidades    Precio     Total
Cambio de pastillas de freno              1      89,00 €    89,00 €
Neumático 315/80 R22.5                    2     410,00 €   820,00 €
Mano de obra (horas)                      3      42,00 €   126,00 €
Subtotal                                                 1.035,00 €
IVA 21 %                                                   217,35 €
Total factura                                            1.252,35 €

Vencimiento: 30 días fecha factura. Domiciliación bancaria.
""",
    "it": """Studio Tecnico Ing. Marco Lombardi
Corso Vittorio Emanuele 77, 20122 Milano — P.IVA 07654321098

Fattura elettronica n. 45/2024 del 12/11/2024
Cliente: Condominio Via Padova 110, Milano — C.F. 97012345678

Descrizione                                           Importo
Progetto di rifacimento facciata                      3.800,00
Direzione lavori (acconto)                            1.200,00
Contributo integrativo 4%                               200,00
Totale imponibile                                     5.200,00
IVA 22%                                               1.144,00
Totale da pagare                                  € 6.344,00

Pagamento entro 60 giorni data fattura tramite bonifico.
""",
    "nl": """Schoonmaakbedrijf Glans & Co
Industrieweg 19, 9723 TD Groningen — KvK 02034567

Factuur 24-0558
Datum: 31-05-2024
Debiteur: Tandartspraktijk Noorderplantsoen

Schoonmaak praktijkruimte mei (20 x)          1.100,00
Glasbewassing buitenzijde                       185,00
Subtotaal                                     1.285,00
Btw 21%                                         269,85
Totaal                                        € 1.554,85

Wij verzoeken u het bedrag binnen 14 dagen over te maken onder vermelding van het factuurnummer.
""",
    "pt": """Gráfica Aurora Ltda.
Av. Paulista 1500, São Paulo — SP — CNPJ 45.678.901/0001-23

NOTA FISCAL DE SERVIÇOS ELETRÔNICA Nº 000.842
Data de emissão: 22/03/2024
Tomador: Editora Pau-Brasil Ltda., CNPJ 11.222.333/0001-44

Discriminação dos serviços                        Valor (R$)
Impressão de 2.000 livros, miolo 160 p.           18.400,00
Acabamento em capa dura                            3.600,00
Valor total dos serviços                          22.000,00
ISS (5%)                                           1.100,00

Vencimento: 21/04/2024. Pagamento via boleto bancário.
""",
    "sv": """Bergström Redovisning AB
Drottninggatan 40, 411 07 Göteborg, Org.nr 559001-2233

Faktura 2024-117
Fakturadatum 2024-10-02     Förfallodag 2024-11-01
Er referens: Maria Ek, Café Kronan

Bokföring september                                3 200,00
Löneadministration, 4 anställda                   1 400,00
Belopp exkl. moms                                  4 600,00
Moms 25%                                           1 150,00
Totalt att betala                               5 750,00 SEK

Betala till plusgiro 123 45 67-8. Vid försenad betalning debiteras dröjsmålsränta.
""",
    "da": """Jensens Tømrerfirma I/S
Industrivej 4, 7100 Vejle — CVR 29 87 65 43

FAKTURA nr. 1088
Dato: 15. oktober 2024
Kunde: Karen Bech, Bøgevej 11, 7100 Vejle

Udskiftning af tagrender                        7.800,00
Materialer (zink, beslag)                       2.150,00
Kørsel                                            350,00
Beløb ekskl. moms                              10.300,00
Moms 25 %                                       2.575,00
Total DKK                                      12.875,00

Beløbet bedes indbetalt senest 29.10.2024 på konto 9570 1234567.
""",
    "zh": """深圳市鹏程物流有限公司
电子发票（普通发票）
发票号码：24442000000012345678
开票日期：2024年09月06日
购买方名称：广州绿源食品有限公司
统一社会信用代码：91440101MA5C123456

项目名称            金额        税率    税额
国内货物运输服务     8,000.00    9%     720.00
装卸服务             1,000.00    6%      60.00
合  计              ¥9,000.00          ¥780.00
价税合计（大写）玖仟柒佰捌拾圆整   （小写）¥9,780.00
开票人：刘洋
""",
    "ja": """御請求書

有限会社 北斗工務店 御中

請求日 2024年8月31日
請求書番号 HK-2408-015

件名：事務所内装工事
ご請求金額 ¥1,650,000-

内訳
内装工事一式              1,500,000
消費税 10%                  150,000
合計                      1,650,000

お支払期日：2024年9月30日
お振込先：三井住友銀行 梅田支店 普通預金 7654321
株式会社 大和インテリア 大阪市北区梅田2-4-9
""",
}

RECEIPT = {
    "en": """THE CORNER CAFE
88 Market St, San Francisco CA
Server: Josh   Table 12   Guests 2
07/19/2024  1:14 PM   Order #5531

2 Flat White               9.00
1 Avocado Toast           12.50
1 Blueberry Muffin         4.25
Subtotal                  25.75
Tax 8.625%                 2.22
Tip                        5.00
Total                    $32.97
VISA ************4417   Approved

Thanks for visiting - see you soon!
""",
    "de": """Apotheke am Markt
Marktplatz 7, 97070 Würzburg
Tel. 0931 123456

Beleg-Nr. 31245  22.02.2024  10:47
Bedient von: Fr. Lang

Ibuprofen 400 mg 20 St.        4,95
Nasenspray 10 ml               3,80
Zuzahlung Rezept               5,00
Summe EUR                     13,75
Kartenzahlung girocard        13,75

enth. MwSt 19%: 2,20
Gute Besserung und vielen Dank!
""",
    "fr": """PHARMACIE DU CENTRE
3 place de la Mairie, 44000 Nantes

Ticket n° 004512   15/04/2024  09:58
Vendeur : Sophie

Doliprane 1000 mg             2,18
Sérum physiologique           3,50
Crème hydratante              8,90
TOTAL                        14,58 EUR
Payé par CB sans contact     14,58 EUR

Dont TVA : 1,02
Merci et bonne journée !
""",
    "es": """BAR RESTAURANTE LOS ARCOS
Plaza Mayor 3, 37002 Salamanca

Mesa 7   Camarero: Pedro   23/08/2024  14:32
Ticket nº 8834

2 Menú del día               25,00
1 Agua mineral                1,80
2 Café con leche              3,20
TOTAL (IVA incl.)            30,00 €
Pagado con tarjeta           30,00 €

¡Gracias por su visita!
""",
    "it": """DISTRIBUTORE CARBURANTI ESSO
SS 16 km 210, 60019 Senigallia (AN)

Documento commerciale   N. 2045-0112
Data 11/05/2024   Ora 07:52

Gasolio self  38,42 l x 1,789   68,73
TOTALE                        68,73
Pagamento carta               68,73
Carta **** **** **** 9031

IVA 22% compresa
Grazie e buon viaggio
""",
    "nl": """Apotheek De Linde
Lindenlaan 2, 6821 HW Arnhem

Bon 00871   12-03-2024   11:24
Medewerker: Fatima

Paracetamol 500 mg 20 st.      1,49
Zonnebrand SPF 30              9,95
Totaal                        11,44
Betaald met pin               11,44

BTW 9% 0,12  BTW 21% 1,73
Beterschap en tot de volgende keer!
""",
    "pt": """RESTAURANTE O MARINHEIRO
Rua das Flores 22, 4050-262 Porto

Fatura-recibo FR 2024/3391
Mesa 4    19-06-2024  21:05

2 Bacalhau à Brás            25,00
1 Vinho verde garrafa        12,00
2 Café                        1,60
Total                        38,60 €
Multibanco                   38,60 €

IVA incluído à taxa legal
Obrigado e volte sempre!
""",
    "sv": """Apoteket Hjärtat
Kungsgatan 44, 111 35 Stockholm

Kvittonr 7712   2024-01-15  16:03
Kassa 1

Alvedon 500 mg 20 st          39,00
Handkräm                      59,00
Totalt SEK                    98,00
Betalt med kort               98,00
Mastercard ****5520

Varav moms 25%: 19,60
Tack och välkommen tillbaka!
""",
    "da": """Bageriet Holm
Jernbanegade 9, 4000 Roskilde

Bon nr. 4410   17.05.2024  07:31

2 Rundstykker                 12,00
1 Wienerbrød                  18,00
1 Kaffe to go                 28,00
Total                         58,00
Betalt med MobilePay          58,00

Moms udgør 11,60
Tak og hav en god dag!
""",
    "zh": """星光咖啡（南京西路店）
上海市静安区南京西路1266号

交易时间：2024-03-22 15:46
单号：0322015
服务员：小李

拿铁（大杯）       1    32.00
芝士蛋糕           1    28.00
应付金额                60.00
微信支付                60.00

请保留此凭证  谢谢光临
""",
    "ja": """カフェ・ド・ソレイユ 京都店
京都市中京区河原町通三条 TEL 075-123-4567

2024年10月5日 15:22
伝票番号 0542  担当:山田

ブレンドコーヒー      2   ¥1,000
チーズケーキ         1     ¥600
合計                     ¥1,600
(内消費税等 10%  ¥145)
クレジット             ¥1,600

ご利用ありがとうございました
""",
}

CONTRACT = {
    "en": """MUTUAL NON-DISCLOSURE AGREEMENT

This Non-Disclosure Agreement is entered into as of March 3, 2024 by and between
Orion Robotics LLC, a Delaware limited liability company, and Vega Materials Corp.
(each a "Party" and together the "Parties").

1. Confidential Information means any non-public information disclosed by either Party.
2. Obligations. The receiving Party shall not disclose Confidential Information to any third party.
3. Term. The obligations under this Agreement survive for three (3) years after disclosure.
4. Remedies. A breach may cause irreparable harm for which injunctive relief is available.
5. This Agreement shall be governed by the laws of the State of New York.

Agreed and accepted:
Orion Robotics LLC, By: ______________   Vega Materials Corp., By: ______________
""",
    "de": """Darlehensvertrag

zwischen Herrn Stefan Krüger, Lindenstraße 3, 50674 Köln – Darlehensgeber –
und Frau Petra Lorenz, Rheinufer 17, 53111 Bonn – Darlehensnehmerin –
wird folgender Vertrag geschlossen:

§ 1 Darlehensbetrag: Der Darlehensgeber gewährt der Darlehensnehmerin ein Darlehen über 12.000 Euro.
§ 2 Zinsen: Das Darlehen ist mit 2 % jährlich zu verzinsen.
§ 3 Rückzahlung: Die Rückzahlung erfolgt in 24 monatlichen Raten zu je 510,00 Euro.
§ 4 Kündigung: Bei Verzug mit zwei Raten kann der Darlehensgeber den Vertrag fristlos kündigen.
§ 5 Schlussbestimmungen: Änderungen bedürfen der Schriftform.

Köln, den 20.02.2024
____________________ Darlehensgeber        ____________________ Darlehensnehmerin
""",
    "fr": """CONTRAT DE TRAVAIL À DURÉE INDÉTERMINÉE

Entre la société Atelier Boisé SAS, représentée par M. Henri Caron, gérant, d'une part,
et Mme Élodie Perrin, demeurant 9 rue Pasteur, 21000 Dijon, d'autre part,
il a été convenu ce qui suit :

Article 1 – Engagement : Mme Perrin est engagée en qualité d'ébéniste à compter du 1er mars 2024.
Article 2 – Période d'essai : deux mois, renouvelable une fois.
Article 3 – Rémunération : salaire brut mensuel de 2 250 euros pour 35 heures hebdomadaires.
Article 4 – Congés payés : conformément aux dispositions légales et conventionnelles.

Fait en double exemplaire à Dijon, le 15 février 2024.
Signature de l'employeur            Signature de la salariée (précédée de « lu et approuvé »)
""",
    "es": """CONTRATO DE COMPRAVENTA DE VEHÍCULO

En Bilbao, a 14 de junio de 2024, comparecen:
VENDEDOR: D. Iñaki Etxeberria, con DNI 16012345-B.
COMPRADOR: Dña. Marta Gómez Sanz, con DNI 72098765-L.

Ambas partes se reconocen capacidad legal para contratar y acuerdan:
PRIMERO. El vendedor transmite al comprador el turismo marca Seat, modelo León, matrícula 1234-HJK.
SEGUNDO. El precio de la compraventa es de 9.500 euros, que el comprador abona en este acto.
TERCERO. El vendedor declara que el vehículo está libre de cargas y gravámenes.
CUARTO. Los gastos de transferencia serán por cuenta del comprador.

Y para que así conste, firman el presente documento por duplicado.
""",
    "it": """ACCORDO DI RISERVATEZZA

Tra Alfa Software S.p.A., con sede in Roma, Via Tiburtina 1020, in persona del legale rappresentante,
e Beta Consulting S.r.l., con sede in Torino, Corso Francia 15,
si conviene e si stipula quanto segue.

1. Per informazioni riservate si intendono tutti i dati tecnici e commerciali scambiati tra le parti.
2. La parte ricevente si impegna a non divulgare le informazioni riservate a terzi.
3. Gli obblighi del presente accordo restano in vigore per cinque anni dalla sottoscrizione.
4. In caso di violazione è dovuta una penale di euro 50.000, salvo il maggior danno.
5. Il presente accordo è regolato dalla legge italiana.

Roma, 8 aprile 2024
Per Alfa Software S.p.A. ____________     Per Beta Consulting S.r.l. ____________
""",
    "nl": """KOOPOVEREENKOMST

De ondergetekenden:
A. de heer Willem van Leeuwen, wonende te Haarlem, hierna: "verkoper";
B. mevrouw Fleur Smit, wonende te Leiden, hierna: "koper";

komen het volgende overeen:
1. Verkoper verkoopt aan koper een zeilboot, type Valk, bouwjaar 1998, met trailer.
2. De koopprijs bedraagt € 6.750, te voldoen bij levering.
3. De levering vindt plaats op 1 mei 2024 te Haarlem.
4. Koper verklaart de boot te hebben bezichtigd; verkoper staat niet in voor verborgen gebreken.
5. Op deze overeenkomst is Nederlands recht van toepassing.

Getekend te Haarlem op 20 april 2024.
""",
    "pt": """CONTRATO DE ARRENDAMENTO HABITACIONAL

Primeiro outorgante (senhorio): Manuel Fonseca, NIF 123456789, residente em Braga.
Segundo outorgante (arrendatário): Rita Carvalho, NIF 234567890.

É celebrado o presente contrato, que se rege pelas cláusulas seguintes:
1.ª O senhorio dá de arrendamento ao arrendatário a fração sita na Rua do Souto 45, 2.º Esq., Braga.
2.ª O contrato tem a duração de dois anos, renovando-se automaticamente por iguais períodos.
3.ª A renda mensal é de 650 euros, a pagar até ao dia 8 de cada mês.
4.ª O arrendatário pode denunciar o contrato com antecedência mínima de 120 dias.

Braga, 1 de fevereiro de 2024. Feito em duplicado, ficando cada parte com um exemplar.
""",
    "sv": """KÖPEKONTRAKT

Säljare: Gunnar Åberg, personnummer 650212-1111, Sundsvall.
Köpare: Sara Lind, personnummer 900304-2222, Härnösand.

§ 1 Säljaren överlåter härmed fritidshuset på fastigheten Sundsvall Skön 3:45 till köparen.
§ 2 Köpeskillingen är 1 250 000 kronor och erläggs på tillträdesdagen.
§ 3 Tillträde sker den 1 juli 2024.
§ 4 Köparen har undersökt fastigheten och godtar dess skick.
§ 5 Detta kontrakt har upprättats i två exemplar, varav parterna tagit var sitt.

Sundsvall den 15 maj 2024
______________________ Säljare              ______________________ Köpare
""",
    "da": """ANSÆTTELSESKONTRAKT

Virksomhed: Fjordens Rejser A/S, Havnepladsen 2, 9000 Aalborg
Medarbejder: Camilla Dahl, Vestergade 31, 9000 Aalborg

1. Tiltrædelse: Ansættelsen begynder den 1. september 2024.
2. Stilling: Medarbejderen ansættes som rejsekonsulent.
3. Arbejdstid: 37 timer om ugen.
4. Løn: 34.500 kr. pr. måned, udbetales bagud den sidste hverdag i måneden.
5. Ferie: Medarbejderen har ret til ferie efter ferieloven.
6. Opsigelse sker efter funktionærlovens regler.

Aalborg, 10. august 2024
Underskrift virksomhed                   Underskrift medarbejder
""",
    "zh": """房屋租赁合同

出租方（以下简称甲方）：赵建国
承租方（以下简称乙方）：孙丽

根据《中华人民共和国民法典》的有关规定，甲乙双方经协商一致，订立本合同。
一、甲方将位于成都市武侯区人民南路88号3单元502室的房屋出租给乙方居住。
二、租赁期限为一年，自2024年7月1日起至2025年6月30日止。
三、月租金为人民币3500元，乙方应于每月5日前支付。
四、租赁期间，乙方不得擅自转租。如乙方违反约定，甲方有权解除合同。
五、本合同自双方签字之日起生效。

甲方签字：            乙方签字：
2024年6月20日
""",
    "ja": """土地賃貸借契約書

賃貸人 佐々木 隆（以下「甲」という。）と賃借人 株式会社グリーンパーク（以下「乙」という。）は、
甲所有の土地について、以下のとおり賃貸借契約を締結する。

第1条 甲は、乙に対し、福岡市博多区博多駅前3丁目の土地 500平方メートルを駐車場として賃貸する。
第2条 賃貸借期間は、2024年4月1日から2029年3月31日までの5年間とする。
第3条 賃料は月額250,000円とし、乙は毎月末日までに翌月分を甲の指定口座に支払う。
第4条 乙は、甲の書面による承諾なく本件土地を第三者に転貸してはならない。

以上を証するため、本契約書2通を作成し、甲乙署名捺印の上、各1通を保有する。
""",
}

BANK = {
    "en": """FIRST COMMUNITY CREDIT UNION
Member statement — Checking account ending 4420
Statement date: 08/31/2024     Period: 08/01/2024 - 08/31/2024
Member: Olivia Brooks, 402 Maple Ave, Columbus OH

Beginning balance                                      $1,912.40
Deposits and other credits                             $3,180.00
Withdrawals and other debits                           $2,466.15
Ending balance                                         $2,626.25

Date    Transaction                        Amount      Balance
08/02   Payroll deposit ACME CORP         1,590.00    3,502.40
08/05   Check #1042                       -1,150.00   2,352.40
08/12   POS Kroger #512                      -86.15   2,266.25
08/16   Payroll deposit ACME CORP         1,590.00    3,856.25
08/28   Online transfer to savings        -1,230.00   2,626.25
""",
    "de": """Volksbank Mittelhessen eG
Girokonto Nr. 0012345600 · Kontoauszug 9/2024 · Seite 1/1
Inhaber: Lukas und Anna Fischer

Datum    Erläuterung                                   Soll        Haben
02.09.   Miete September Wohnbau GmbH                 950,00
05.09.   Lohn/Gehalt Stadtwerke Gießen                           3.105,20
11.09.   SEPA-Lastschrift Telekom                      49,95
19.09.   Bargeldauszahlung Geldautomat                200,00
30.09.   Abschluss Entgelte                              7,90

Saldo alt 31.08.2024:  1.520,18 H
Saldo neu 30.09.2024:  3.417,53 H
""",
    "fr": """BNP PARIBAS
Relevé de votre compte chèques n° 30004 01234 00012345678 56
du 1er juillet 2024 au 31 juillet 2024
Titulaire : Mme Sandrine Leroy

Date    Nature de l'opération                       Débit       Crédit
        SOLDE CRÉDITEUR AU 30.06.2024                            912,44
02.07   PRLV SEPA Free Mobile                        19,99
05.07   VIR SEPA Salaire Mairie de Rennes                      2 145,30
09.07   CB Leclerc Rennes 08/07                     112,60
22.07   CHQ n° 7741                                 350,00
        SOLDE CRÉDITEUR AU 31.07.2024                          2 575,15
""",
    "es": """BBVA
Cuenta Online — Extracto mensual de agosto 2024
Titular: Sergio Martín Vega   IBAN ES21 0182 1234 5600 0012 3456

F. Operación  Concepto                           Importe     Saldo
01/08/2024    Saldo inicial                                   760,25
02/08/2024    Nómina Ayuntamiento de Murcia      1.845,00   2.605,25
06/08/2024    Bizum enviado a Laura               -25,00    2.580,25
14/08/2024    Adeudo Vodafone                     -39,90    2.540,35
27/08/2024    Retirada cajero                    -100,00    2.440,35

Saldo a 31/08/2024: 2.440,35 EUR
""",
    "it": """BANCA POPOLARE DI SONDRIO
Lista movimenti del conto n. 000045678901 — periodo 01/03/2024 - 31/03/2024
Intestato a: Francesca Moretti

Data oper.   Valuta      Causale                         Dare       Avere
05/03/2024   05/03/2024  Emolumenti marzo                          1.920,00
08/03/2024   08/03/2024  Pagamento POS Esselunga          74,30
15/03/2024   15/03/2024  Utenze Acea Ato 2                62,10
28/03/2024   28/03/2024  Prelievo Bancomat               150,00

Saldo contabile al 31/03/2024: 3.412,76
Saldo disponibile al 31/03/2024: 3.412,76
""",
    "nl": """Rabobank
Rekeningoverzicht Betaalrekening NL44 RABO 0123 4567 89
Periode: 1 augustus 2024 - 31 augustus 2024   Rekeninghouder: T. Mulder

Datum    Naam / Omschrijving                  Af         Bij
01-08    Huur Woonstichting De Key          1.045,00
06-08    Salaris Philips Nederland B.V.                3.210,00
13-08    Jumbo Supermarkten Eindhoven         67,40
24-08    Zorgverzekering CZ                  138,75

Saldo per 01-08-2024: 2.114,90
Saldo per 31-08-2024: 4.073,75
""",
    "pt": """Banco do Brasil
Extrato de conta corrente — Agência 1234-5  Conta 98765-4
Cliente: Paulo Henrique Ramos
Período: 01/05/2024 a 31/05/2024

Data       Histórico                         Valor (R$)      Saldo (R$)
30/04      SALDO ANTERIOR                                      1.205,30
03/05      Pix recebido - Mariana S.            350,00 C       1.555,30
06/05      Pagamento de boleto - Enel           212,45 D       1.342,85
10/05      Salário                            4.800,00 C       6.142,85
20/05      Saque caixa eletrônico               300,00 D       5.842,85
31/05      S A L D O                                           5.842,85
""",
    "sv": """Swedbank
Kontohändelser Privatkonto 8327-9, 123 456 789-0
2024-06-01 – 2024-06-30   Kontoinnehavare: Emma Sjöberg

Datum       Text                              Belopp        Saldo
2024-06-03  Hyra Riksbyggen                 -8 940,00    4 210,55
2024-06-14  Swish från Johan L                 450,00    4 660,55
2024-06-25  Lön Region Skåne                28 650,00   33 310,55
2024-06-27  Kortköp Systembolaget             -312,00   32 998,55

Saldo 2024-06-30: 32 998,55 kr
""",
    "da": """Nordea
Kontooversigt — Budgetkonto 2191 8765432109
Periode 01.09.2024 - 30.09.2024   Kontohaver: Henrik Lund

Bogført   Tekst                              Beløb         Saldo
          Saldo før periode                               3.402,11
02.09     Husleje Boligselskabet Fyn       -7.250,00     -3.847,89
05.09     Overførsel fra opsparing         10.000,00      6.152,11
12.09     Netto Odense Kortkøb               -218,40      5.933,71
29.09     Løn Odense Kommune               24.180,00     30.113,71

Saldo ved periodens udgang: 30.113,71
""",
    "zh": """中国工商银行
借记卡账户历史明细清单
卡号：6222 0210 0123 4567 890   户名：陈静
起止日期：2024-07-01 至 2024-07-31

记账日期     摘要        交易金额      余额       对方户名
2024-07-02   工资       +9,800.00    15,320.50   北京某某科技有限公司
2024-07-08   消费         -356.80    14,963.70   京东商城
2024-07-15   转账支出    -3,000.00   11,963.70   陈建华
2024-07-25   利息            +4.12   11,967.82
""",
    "ja": """ゆうちょ銀行
通常貯金 ご利用明細
記号 12340 番号 56789012   加入者名 小林 さくら 様
2024年9月分

日付       摘要            お引出し      お預入れ      現在高
09/01      繰越                                        182,400
09/05      給料                            265,000     447,400
09/10      自動払込 NHK       2,200                    445,200
09/20      ATM             30,000                      415,200
09/27      クレジット代金    48,730                     366,470
""",
}

PAPER = {
    "en": """Measuring Urban Tree Canopy from Street-Level Imagery

Sofia Alvarez (Dept. of Geography, University of Toronto)
Ben Okafor (School of Computing, McGill University)

Abstract — Street-level photographs offer a cheap alternative to aerial surveys of urban
trees. We train a segmentation network on 12,000 labelled panoramas and estimate canopy
cover for 40 neighbourhoods. Our estimates correlate with LiDAR measurements (r = 0.91).

Index Terms — remote sensing, semantic segmentation, urban forestry

I. INTRODUCTION
Tree canopy reduces heat exposure [1], [2]. Prior studies relied on aerial imagery (Li et al., 2015).
The green view index is defined as $GVI = \\frac{1}{n}\\sum_i g_i / p_i$.
""",
    "de": """Zur Rolle der Mikrobiota bei der Verdauung von Ballaststoffen

Julia Roth¹, Felix Hahn²
¹ Lehrstuhl für Ernährungsphysiologie, Technische Universität München
² Max-Rubner-Institut, Karlsruhe

Abstract
Wir untersuchten die Fermentation von Inulin durch Darmbakterien in vitro. Die Produktion
kurzkettiger Fettsäuren stieg um 35 % gegenüber der Kontrolle (n = 18).

1 Hintergrund
Ballaststoffe werden im Dickdarm fermentiert (Schmidt und Wolf 2017; Becker et al. 2020).

2 Material und Methoden
Stuhlproben von 18 gesunden Probanden wurden anaerob inkubiert (Tab. 1).
""",
    "fr": """Une approche par apprentissage profond pour la reconnaissance des chants d'oiseaux

Léa Bernard, Antoine Roux
Institut de Recherche en Informatique de Toulouse (IRIT), Université Toulouse III

Résumé — Nous proposons un réseau convolutif entraîné sur des spectrogrammes pour identifier
132 espèces d'oiseaux d'Europe. L'exactitude atteint 91,4 % sur le jeu de test.

1 Contexte et état de l'art
Les travaux antérieurs [4, 9] utilisent des descripteurs MFCC. Nous montrons que
l'augmentation de données améliore la robustesse (voir Tableau 2).

Bibliographie
[4] Stowell, D. et al. Methods in Ecology and Evolution, 10(3), 2019.
""",
    "es": """Efecto de la temperatura del agua en la reproducción del mejillón mediterráneo

Pablo Jiménez, Lucía Herrera
Instituto de Ciencias del Mar (ICM-CSIC), Barcelona

RESUMEN
Se analizó la puesta de Mytilus galloprovincialis en cultivo bajo tres regímenes térmicos.
A 24 °C la fecundidad se redujo un 40 % respecto al control (p < 0,05).

Palabras clave: acuicultura, cambio climático, bivalvos

INTRODUCCIÓN
El calentamiento del Mediterráneo afecta a los bivalvos (Pérez et al., 2019; Sánchez, 2021).
MATERIAL Y MÉTODOS
Los ejemplares se recolectaron en el delta del Ebro en abril de 2023.
""",
    "it": """Analisi della stabilità sismica di edifici in muratura storica

Alessandro Greco, Sara Marino
Dipartimento di Ingegneria Civile, Politecnico di Milano

Abstract
Il presente studio valuta la vulnerabilità sismica di dieci chiese romaniche mediante
modelli agli elementi finiti. I risultati evidenziano il ruolo delle catene metalliche.

1. Introduzione
Il patrimonio edilizio storico italiano è esposto a rischio sismico elevato [1].
La rigidezza equivalente è data da $k = E A / L$.

Riferimenti bibliografici
[1] Lagomarsino, S. et al. (2013). Engineering Structures, 56, 1787-1799.
""",
    "nl": """Fietsgebruik en gezondheid bij ouderen: een cohortstudie

Anouk Peters, Bram Willems
Afdeling Epidemiologie, Erasmus MC, Rotterdam

Samenvatting
Doel: het verband onderzoeken tussen dagelijks fietsen en cardiovasculaire gezondheid bij
65-plussers. Methode: 4.200 deelnemers werden tien jaar gevolgd. Resultaten: fietsers hadden
een 23% lager risico op hartfalen.

Achtergrond
Lichaamsbeweging vermindert het risico op hart- en vaatziekten (Smit et al., 2018).

Literatuur
1. Smit J, et al. Eur Heart J. 2018;39:1234-41.
""",
    "pt": """Dinâmica do desmatamento na Amazônia Legal entre 2000 e 2020

Fernanda Lima, Gustavo Rocha
Instituto Nacional de Pesquisas Espaciais (INPE), São José dos Campos

RESUMO
Este estudo analisa séries temporais de imagens Landsat para quantificar a perda florestal
em 772 municípios. Verificou-se uma redução de 70% entre 2004 e 2012, seguida de aumento.

Palavras-chave: sensoriamento remoto, desmatamento, Amazônia

1. INTRODUÇÃO
O monitoramento por satélite é essencial para políticas públicas (Souza et al., 2020).
""",
    "sv": """Läsförståelse hos elever i årskurs 4: en interventionsstudie

Maja Eriksson, Oskar Nilsson
Institutionen för pedagogik och didaktik, Göteborgs universitet

Abstract
Syftet med studien var att pröva en metod för strategiundervisning i läsförståelse.
120 elever deltog. Interventionsgruppen förbättrade sina resultat signifikant (d = 0,45).

1. Bakgrund
Tidigare forskning visar att explicit strategiundervisning gynnar svaga läsare
(Andersson m.fl., 2019).

Referenslista
Andersson, L. m.fl. (2019). Pedagogisk forskning i Sverige, 24(2), 33–51.
""",
    "da": """Kvælstofudvaskning fra økologiske og konventionelle marker

Rasmus Thygesen, Line Kjær
Institut for Agroøkologi, Københavns Universitet

Sammendrag
Vi målte kvælstofudvaskningen på 16 marker over tre vækstsæsoner. Udvaskningen var i
gennemsnit 28 % lavere ved økologisk drift, men variationen mellem markerne var stor.

1 Baggrund
Landbruget er den største kilde til kvælstof i vandmiljøet (Hansen m.fl., 2017).
Udvaskningen beregnes som $L = C \\cdot Q$, hvor C er koncentrationen.

Litteraturliste
Hansen, B. m.fl. (2017). Journal of Environmental Quality 46, 101–110.
""",
    "zh": """城市热岛效应的时空演变及其驱动因素分析——以武汉市为例

李娜¹，周杰²
（1. 武汉大学资源与环境科学学院；2. 华中科技大学建筑与城市规划学院）

摘  要：利用2000—2020年Landsat遥感影像反演武汉市地表温度，分析城市热岛的时空变化。
结果表明，热岛面积增加了62%，不透水面比例是主要驱动因素。
关键词：城市热岛；地表温度；遥感

0 引言
城市化进程改变了下垫面性质[1-3]。
""",
    "ja": """日本語学習者の敬語使用に関する調査研究

伊藤 由美（名古屋大学大学院人文学研究科）

【要旨】
本稿では、中上級の日本語学習者120名を対象に、依頼場面における敬語使用の実態を調査した。
その結果、尊敬語と謙譲語の混同が多く見られることが明らかになった。

【キーワード】敬語、日本語教育、語用論

1. 研究の背景
学習者の敬語習得に関する先行研究（佐藤 2015；田中 2018）では、
""",
}

LETTER = {
    "en": """Department of History
Riverside College
Springfield, IL 62701

November 4, 2024

Admissions Committee
Graduate School of Arts and Sciences

To the Admissions Committee:

I am pleased to recommend Ms. Hannah Lee for your doctoral program in history. Over the
past three years she has been one of the most thoughtful students in my seminars, and her
senior thesis on nineteenth-century river trade was the best I have supervised.

Please do not hesitate to contact me if you need any further information.

Sincerely,
Prof. Robert Hale
""",
    "de": """Anna Schmitt
Weinbergstraße 21
55116 Mainz

An die
Hausverwaltung Rheinblick GmbH
Große Bleiche 10
55116 Mainz

Mainz, 12. November 2024

Heizungsausfall in meiner Wohnung

Sehr geehrter Herr Wagner,

seit dem 8. November funktioniert die Heizung in meiner Wohnung im 3. Stock nicht mehr.
Ich bitte Sie, umgehend einen Handwerker zu beauftragen, und behalte mir eine Mietminderung vor.

Freundliche Grüße
Anna Schmitt
""",
    "fr": """Association Sportive de Quimper
Maison des Sports, 29000 Quimper

Quimper, le 5 mars 2024

Chers parents,

Nous avons le plaisir de vous inviter à l'assemblée générale de l'association, qui se
tiendra le samedi 23 mars à 10 heures au gymnase municipal. Nous y présenterons le bilan
de la saison et les projets pour l'année prochaine.

Nous comptons sur votre présence et vous adressons nos sincères salutations.

Le Président,
Yann Le Goff
""",
    "es": """Colegio Santa Teresa
Avenida de América 45, 28002 Madrid

Madrid, 2 de septiembre de 2024

Queridas familias:

Les damos la bienvenida al nuevo curso escolar. Las clases comenzarán el lunes 9 de
septiembre a las nueve de la mañana. Les recordamos que el uniforme es obligatorio y que el
comedor funcionará desde el primer día.

Reciban un afectuoso saludo,
La Dirección
""",
    "it": """Mario Colombo
Via Manzoni 18
22100 Como

Como, 30 gennaio 2024

Spettabile
Ufficio Tributi del Comune di Como

Oggetto: richiesta di rateizzazione TARI 2023

Con la presente chiedo di poter pagare in quattro rate l'importo della tassa sui rifiuti
per l'anno 2023, a causa di difficoltà economiche temporanee.

Ringraziando per l'attenzione, porgo cordiali saluti.
Mario Colombo
""",
    "nl": """Stichting Buurthuis De Brug
Kerkstraat 5, 2011 GH Haarlem

Haarlem, 7 juni 2024

Beste buurtbewoners,

Op zaterdag 22 juni organiseren wij weer het jaarlijkse straatfeest. Er is muziek, een
rommelmarkt en voor de kinderen een springkussen. Wilt u helpen met opbouwen? Meld u dan
aan bij het buurthuis.

Wij hopen u te zien!

Hartelijke groeten,
Het bestuur van De Brug
""",
    "pt": """Joana Pereira
Avenida da Liberdade 120, 3.º
1250-146 Lisboa

Lisboa, 18 de abril de 2024

À Administração do Condomínio
Edifício Liberdade

Assunto: infiltração na garagem

Caros senhores,

Venho informar que desde as chuvas da semana passada existe uma infiltração de água junto ao
meu lugar de estacionamento. Solicito que seja verificada com a maior brevidade possível.

Atenciosamente,
Joana Pereira
""",
    "sv": """Göran Lundberg
Storgatan 3
972 31 Luleå

Luleå 14 februari 2024

Till Luleå Energi AB, kundtjänst

Angående: felaktig elräkning för januari

Hej,

Jag har fått en elräkning för januari som är nästan dubbelt så hög som vanligt, trots att vi
varit bortresta i två veckor. Jag ber er kontrollera mätarställningen och återkomma till mig.

Vänliga hälsningar
Göran Lundberg
""",
    "da": """Ole og Birgitte Madsen
Kirkevej 8
6700 Esbjerg

Esbjerg, 2. december 2024

Til naboerne på Kirkevej

Kære naboer

Vi holder 40-års bryllupsdag lørdag den 14. december og vil gerne invitere jer til et glas
gløgg i vores have fra klokken 15. Der kan blive lidt larm om aftenen, og vi håber på jeres
forståelse.

De bedste hilsner
Ole og Birgitte
""",
    "zh": """李老师：

您好！

我是您2019届的学生张晨。毕业后我一直在深圳从事软件开发工作，近日得知您荣获
“优秀教师”称号，特写信向您表示祝贺。回想大学四年，您的教诲让我受益匪浅。
今年春节我会回武汉，届时想登门拜访，不知您是否方便。

祝您身体健康，工作顺利！

学生 张晨
2024年1月15日
""",
    "ja": """拝啓　秋冷の候、皆様にはますますご健勝のこととお喜び申し上げます。

さて、私こと
このたび九月三十日をもちまして、株式会社東和商事を円満退社いたしました。
在職中は公私にわたり大変お世話になり、心より御礼申し上げます。
今後は郷里の長野にて家業を継ぐこととなりました。

末筆ながら皆様のご健康とご多幸をお祈り申し上げます。

敬具

令和六年十月
高木 誠一
""",
}

DOCTYPES = {
    "invoice": INVOICE,
    "receipt": RECEIPT,
    "contract": CONTRACT,
    "bank_statement": BANK,
    "scientific_paper": PAPER,
    "letter": LETTER,
}

HELDOUT: list[tuple[str, str, str]] = [
    (lang, doctype, text) for doctype, by_lang in DOCTYPES.items() for lang, text in by_lang.items()
]

# Short held-out texts (one or two sentences, as on a sticky note, a form field or a slip) for
# the short-text language measurement. Five per language.
SHORT: dict[str, list[str]] = {
    "en": ["Please call me back before Friday about the parcel.",
           "The meeting has been moved to the small room upstairs.",
           "Keep this slip as proof of your payment.",
           "Your order will be shipped within two working days.",
           "Return the signed form to the front desk by noon."],
    "de": ["Bitte rufen Sie mich vor Freitag wegen des Pakets zurück.",
           "Die Besprechung wurde in den kleinen Raum oben verlegt.",
           "Bewahren Sie diesen Beleg als Zahlungsnachweis auf.",
           "Ihre Bestellung wird innerhalb von zwei Werktagen versandt.",
           "Geben Sie das unterschriebene Formular bis zwölf Uhr am Empfang ab."],
    "fr": ["Merci de me rappeler avant vendredi au sujet du colis.",
           "La réunion a été déplacée dans la petite salle à l'étage.",
           "Conservez ce reçu comme preuve de paiement.",
           "Votre commande sera expédiée sous deux jours ouvrés.",
           "Rapportez le formulaire signé à l'accueil avant midi."],
    "es": ["Por favor, llámeme antes del viernes por lo del paquete.",
           "La reunión se ha trasladado a la sala pequeña de arriba.",
           "Guarde este justificante como prueba de pago.",
           "Su pedido se enviará en un plazo de dos días laborables.",
           "Entregue el formulario firmado en recepción antes del mediodía."],
    "it": ["Per favore mi richiami prima di venerdì per il pacco.",
           "La riunione è stata spostata nella saletta al piano di sopra.",
           "Conservi questa ricevuta come prova del pagamento.",
           "Il suo ordine sarà spedito entro due giorni lavorativi.",
           "Consegni il modulo firmato alla reception entro mezzogiorno."],
    "nl": ["Wilt u mij voor vrijdag terugbellen over het pakket?",
           "De vergadering is verplaatst naar de kleine zaal boven.",
           "Bewaar dit bonnetje als bewijs van betaling.",
           "Uw bestelling wordt binnen twee werkdagen verzonden.",
           "Lever het ondertekende formulier voor twaalf uur in bij de balie."],
    "pt": ["Por favor, ligue-me antes de sexta-feira sobre a encomenda.",
           "A reunião passou para a sala pequena lá em cima.",
           "Guarde este talão como comprovativo de pagamento.",
           "A sua encomenda será enviada no prazo de dois dias úteis.",
           "Entregue o formulário assinado na receção até ao meio-dia."],
    "sv": ["Ring mig gärna före fredag angående paketet.",
           "Mötet har flyttats till det lilla rummet på övervåningen.",
           "Spara kvittot som bevis på din betalning.",
           "Din beställning skickas inom två arbetsdagar.",
           "Lämna den underskrivna blanketten i receptionen före tolv."],
    "da": ["Ring venligst tilbage før fredag angående pakken.",
           "Mødet er flyttet til det lille lokale ovenpå.",
           "Gem bonen som bevis for din betaling.",
           "Din bestilling bliver sendt inden for to hverdage.",
           "Aflever den underskrevne blanket i receptionen inden klokken tolv."],
    "zh": ["请在周五之前给我回电话，关于包裹的事。",
           "会议改到楼上的小会议室了。",
           "请保留此凭条作为付款证明。",
           "您的订单将在两个工作日内发货。",
           "请在中午前把签好字的表格交到前台。"],
    "ja": ["荷物の件で金曜日までに折り返しお電話ください。",
           "会議は二階の小会議室に変更になりました。",
           "お支払いの証明としてこの控えを保管してください。",
           "ご注文の商品は二営業日以内に発送いたします。",
           "署名した用紙を正午までに受付へ提出してください。"],
}


# ============================================================================= evaluation

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def degrade(img, seed: int):  # type: ignore[no-untyped-def]
    """Make a rendered page look scanned: slight skew, blur, grey background, speckle, JPEG."""
    import io

    from PIL import Image, ImageFilter

    rnd = random.Random(seed)
    img = img.convert("L").rotate(rnd.uniform(-1.2, 1.2), resample=Image.Resampling.BICUBIC, fillcolor=235, expand=True)
    img = img.filter(ImageFilter.GaussianBlur(0.8))
    px = img.load()
    w, h = img.size
    for _ in range(w * h // 400):  # speckle
        x, y = rnd.randrange(w), rnd.randrange(h)
        px[x, y] = rnd.choice((30, 90, 200))
    img = img.point(lambda v: min(255, int(v * 0.9 + 18)))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=55)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def render(lang: str, text: str):  # type: ignore[no-untyped-def]
    try:
        from docgen import text_image  # tests/docgen.py (shared test document generator)

        return text_image(text, lang=lang if lang in ("zh", "ja") else None, font_size=28)
    except ImportError:  # fallback: draw it here
        from PIL import Image, ImageDraw, ImageFont

        cjk = lang in ("zh", "ja")
        font = ImageFont.truetype(
            "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc" if cjk else "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            28, index=(0 if lang == "ja" else 2) if cjk else 0)
        lines = text.splitlines()
        img = Image.new("RGB", (1400, 120 + 44 * len(lines)), "white")
        d = ImageDraw.Draw(img)
        for i, line in enumerate(lines):
            d.text((60, 60 + 44 * i), line, font=font, fill="black")
        return img


def ocr_all(docs: list[tuple[str, str, str]], *, degraded: bool, threads: int) -> list[str]:
    from daemon.config import EngineCfg, TesseractCfg
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine

    eng = TesseractEngine(EngineCfg(kind="tesseract", tesseract=TesseractCfg(threads=threads)))
    eng.start()
    try:
        futs = []
        for i, (lang, _dt, text) in enumerate(docs):
            img = render(lang, text)
            if degraded:
                img = degrade(img, i)
            futs.append(eng.submit(PageRequest(f"doc-{i}", 0, img)))
        return [f.result().text for f in futs]
    finally:
        eng.close()


def strip_diacritics(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s) if not unicodedata.combining(c))


def ocr_noise(s: str, rnd: random.Random) -> str:
    """Simulated OCR damage: drop 3% of characters, split words at 3% of positions."""
    out = []
    for ch in s:
        r = rnd.random()
        if r < 0.03:
            continue
        if r < 0.06:
            out.append(" ")
        out.append(ch)
    return "".join(out)


def short_texts() -> dict[str, dict[str, float]]:
    """Language accuracy on SHORT: detect_language vs py3langid alone (11 languages)."""
    from daemon.classify import _model_scores, detect_language
    from daemon.config import LANGUAGES

    rnd = random.Random(7)
    variants = {
        "clean": lambda s: s,
        "no_diacritics": strip_diacritics,
        "ocr_noise": lambda s: ocr_noise(strip_diacritics(s), rnd),
    }
    res: dict[str, dict[str, float]] = {}
    misses: list[str] = []
    for vname, fn in variants.items():
        ours = base = n = 0
        for lang, sents in SHORT.items():
            for s in sents:
                t = fn(s)
                n += 1
                got = detect_language(t)[0]
                ours += got == lang
                p = _model_scores(t, LANGUAGES)
                base += max(p, key=lambda k: p[k]) == lang
                if got != lang:
                    misses.append(f"  {vname}: {lang} -> {got}: {t!r}")
        res[vname] = {"n": n, "detect_language": ours / n, "py3langid_only": base / n}
    print("short texts (1-2 sentences), language accuracy:")
    for vname, r in res.items():
        print(f"  {vname:<14} n={r['n']:<3} detect_language {r['detect_language']:.1%}   py3langid alone {r['py3langid_only']:.1%}")
    if misses:
        print("misses of detect_language:")
        print("\n".join(misses))
    return res


def evaluate(texts: list[str], docs: list[tuple[str, str, str]], label: str) -> dict[str, object]:
    from daemon.classify import classify
    from daemon.config import load_config

    cfg = load_config(REPO / "rules.yaml")
    lang_ok = dt_ok = 0
    confusion: Counter[tuple[str, str]] = Counter()
    lang_conf: Counter[tuple[str, str]] = Counter()
    failures = []
    for i, ((lang, dt, _), text) in enumerate(zip(docs, texts, strict=True)):
        c = classify(text, cfg=cfg, filename=f"scan-{i:03d}.png", pages=1, markdown=False)
        lang_ok += c.language == lang
        dt_ok += c.doctype == dt
        confusion[(dt, c.doctype)] += 1
        if c.language != lang:
            lang_conf[(lang, c.language)] += 1
        if c.language != lang or c.doctype != dt:
            top = sorted(c.doctype_scores.items(), key=lambda kv: -kv[1])[:3]
            failures.append(f"  {lang}/{dt}: got {c.language} ({c.language_confidence:.2f}) / {c.doctype}; top scores {top}")
    n = len(docs)
    print(f"\n[{label}] {n} documents: language {lang_ok}/{n} = {lang_ok / n:.1%}, doctype {dt_ok}/{n} = {dt_ok / n:.1%}")
    names = list(dict.fromkeys([d for _, d, _ in docs] + ["other"]))
    width = max(len(x) for x in names)
    print("doctype confusion (rows: truth, columns: predicted):")
    print(" " * (width + 2) + " ".join(f"{x[:8]:>8}" for x in names))
    for t in names[:-1]:
        print(f"  {t:<{width}}" + " ".join(f"{confusion[(t, p)]:>8}" for p in names))
    if lang_conf:
        print("language errors:", ", ".join(f"{a}->{b} x{k}" for (a, b), k in lang_conf.items()))
    if failures:
        print("failures:")
        print("\n".join(failures))
    return {"n": n, "language_accuracy": lang_ok / n, "doctype_accuracy": dt_ok / n,
            "language_errors": {f"{a}->{b}": k for (a, b), k in lang_conf.items()},
            "doctype_confusion": {f"{a}->{b}": k for (a, b), k in confusion.items() if a != b}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-ocr", action="store_true", help="classify the ground-truth text only (no Tesseract)")
    ap.add_argument("--modes", default="clean,scanned", help="clean and/or scanned (degraded) renderings")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--show-ocr", action="store_true", help="print the OCR text of every document")
    ap.add_argument("--only", default="", help="comma-separated lang/doctype filters, e.g. ja/invoice,zh/receipt")
    args = ap.parse_args()
    docs = HELDOUT
    if args.only:
        wanted = set(args.only.split(","))
        docs = [d for d in HELDOUT if f"{d[0]}/{d[1]}" in wanted or d[0] in wanted or d[1] in wanted]

    from importlib.metadata import version

    print(f"date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, py3langid {version('py3langid')}, tesserocr {version('tesserocr')}")
    out: dict[str, object] = {"short": short_texts()}
    out["ground_truth_text"] = evaluate([t for _, _, t in docs], docs, "ground-truth text, no OCR")
    if not args.no_ocr:
        for mode in args.modes.split(","):
            t0 = time.monotonic()
            texts = ocr_all(docs, degraded=(mode == "scanned"), threads=args.threads)
            secs = time.monotonic() - t0
            res = evaluate(texts, docs, f"Tesseract OCR of {mode} renderings, {secs:.0f} s")
            out[f"ocr_{mode}"] = res
            if args.show_ocr:
                for (lang, dt, _), text in zip(docs, texts, strict=True):
                    print(f"----- {lang}/{dt}\n{text[:600]}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
