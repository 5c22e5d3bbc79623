#include "cost_bar_delegate.hpp"

#include <QPainter>
#include <algorithm>

namespace memtrail::gui {

void CostBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                            const QModelIndex& index) const {
  const QVariant f = index.data(fraction_role_);
  if (f.isValid()) {
    const double share = std::clamp(f.toDouble(), 0.0, 1.0);
    if (share > 0) {
      // A translucent bar behind the number, growing from the right as it is aligned.
      QRect bar = option.rect.adjusted(2, 2, -2, -2);
      const int width = std::max(1, static_cast<int>(bar.width() * share + 0.5));
      bar.setLeft(bar.right() - width + 1);
      // Not the selection's colour: a bar must not read as selected text.
      const QColor colour(240, 150, 60, 70);
      painter->fillRect(bar, colour);
    }
  }
  QStyledItemDelegate::paint(painter, option, index);
}

}  // namespace memtrail::gui
