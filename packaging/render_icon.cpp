// SPDX-License-Identifier: Apache-2.0
// kforge_render_icon SVG PNG SIZE: renders the application icon to a square PNG at build time, so the
// package ships PNG sizes that always match resources/icons/kforge.svg. Raster painting only: no display,
// no platform plugin.
#include <QCoreApplication>
#include <QImage>
#include <QPainter>
#include <QString>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: kforge_render_icon SVG PNG SIZE\n");
        return 2;
    }
    QCoreApplication app(argc, argv);
    const QString svg = QString::fromLocal8Bit(argv[1]);
    const QString png = QString::fromLocal8Bit(argv[2]);
    bool ok = false;
    const int size = QString::fromLocal8Bit(argv[3]).toInt(&ok);
    if (!ok || size <= 0 || size > 4096) {
        std::fprintf(stderr, "kforge_render_icon: bad size '%s'\n", argv[3]);
        return 2;
    }
    QSvgRenderer renderer(svg);
    if (!renderer.isValid()) {
        std::fprintf(stderr, "kforge_render_icon: cannot read %s\n", argv[1]);
        return 1;
    }
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        renderer.render(&painter, QRectF(0, 0, size, size));
    }
    if (!image.save(png, "PNG")) {
        std::fprintf(stderr, "kforge_render_icon: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
